import type { TenantScope, v1 } from '@trellis/contracts';

/**
 * What chat needs from retrieval: the combined Retrieve (graph → refinement → chunks), one
 * call per chat turn. In standalone the retrieval service itself fills it; in distributed
 * mode a gRPC client of the retrieval service does.
 */
export interface RetrievalPort {
  retrieve(tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse>;
}
