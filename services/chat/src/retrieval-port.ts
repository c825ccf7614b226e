import type { TenantScope, v1 } from '@trellis/contracts';

/**
 * What chat needs from retrieval. In standalone the retrieval service itself fills it; in
 * distributed mode a gRPC client of the retrieval service does.
 */
export interface RetrievalPort {
  retrieveGraph(tenant: TenantScope, request: v1.RetrieveGraphRequest): Promise<v1.GraphContext>;
  retrieveChunks(tenant: TenantScope, request: v1.RetrieveChunksRequest): Promise<v1.RetrieveChunksResponse>;
}
