import type { Metadata } from '@grpc/grpc-js';
import { DEFAULT_TENANT, ErrorCode, TrellisError } from '@trellis/contracts';
import type { TenantScope } from '@trellis/contracts';

/**
 * Maps a caller to its tenant. With no API keys configured (standalone) every caller is the
 * default tenant; with keys, a request must carry one (`authorization: Bearer <key>` or
 * `x-api-key`) and acts as the tenant the key belongs to.
 */
export class TenantResolver {
  constructor(
    private readonly apiKeys: ReadonlyMap<string, string>,
    /** Shared by the services of one deployment: lets one service call another for a tenant. */
    private readonly internalToken?: string,
  ) {}

  resolve(metadata: Metadata | undefined): TenantScope {
    const forwarded = String(metadata?.get(TENANT_HEADER)[0] ?? '');
    if (forwarded !== '' && this.internalToken && String(metadata?.get(INTERNAL_TOKEN_HEADER)[0] ?? '') === this.internalToken) {
      return { tenantId: forwarded };
    }
    if (this.apiKeys.size === 0) return { tenantId: DEFAULT_TENANT };
    const header = String(metadata?.get('authorization')[0] ?? '');
    const key = header.startsWith('Bearer ') ? header.slice(7).trim() : String(metadata?.get('x-api-key')[0] ?? '');
    const tenantId = key === '' ? undefined : this.apiKeys.get(key);
    if (tenantId === undefined) throw new TrellisError(ErrorCode.Unauthenticated, 'a valid API key is required');
    return { tenantId };
  }
}

export const TENANT_HEADER = 'x-trellis-tenant';
export const INTERNAL_TOKEN_HEADER = 'x-trellis-internal-token';

export const TENANT_RESOLVER = Symbol.for('trellis.tenant-resolver');
