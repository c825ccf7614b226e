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

  retrieve(tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse> {
    return this.client.retrieve(request, this.headers(tenant));
  }

  close(): void {
    this.client.close();
  }

  private headers(tenant: TenantScope): Record<string, string> {
    return this.internalToken ? { [TENANT_HEADER]: tenant.tenantId, [INTERNAL_TOKEN_HEADER]: this.internalToken } : {};
  }
}
