import { TrellisClient } from '@trellis/client';
import type { TenantScope, v1 } from '@trellis/contracts';
import { INTERNAL_TOKEN_HEADER, TENANT_HEADER } from '@trellis/grpc-edge';
import type { RetrievalPort } from './retrieval-port';

/** Retrieval over gRPC, for a chat service running apart from the retrieval service. */
export class GrpcRetrievalPort implements RetrievalPort {
  private readonly client: TrellisClient;

  constructor(
    address: string,
    private readonly internalToken: string | undefined,
  ) {
    this.client = new TrellisClient({ address, timeoutMs: 30_000 });
  }

  retrieveGraph(tenant: TenantScope, request: v1.RetrieveGraphRequest): Promise<v1.GraphContext> {
    return this.client.retrieveGraph(request, this.headers(tenant));
  }

  retrieveChunks(tenant: TenantScope, request: v1.RetrieveChunksRequest): Promise<v1.RetrieveChunksResponse> {
    return this.client.retrieveChunks(request, this.headers(tenant));
  }

  close(): void {
    this.client.close();
  }

  private headers(tenant: TenantScope): Record<string, string> {
    return this.internalToken ? { [TENANT_HEADER]: tenant.tenantId, [INTERNAL_TOKEN_HEADER]: this.internalToken } : {};
  }
}
