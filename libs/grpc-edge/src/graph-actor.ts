import type { Metadata } from '@grpc/grpc-js';
import { DEFAULT_TENANT } from '@trellis/contracts';
import type { TenantScope } from '@trellis/contracts';
import { ACTOR_HEADER } from '@trellis/wire';

const MAX_ACTOR_CHARS = 200;

/**
 * Who the edit log says made an edit: the `x-trellis-actor` metadata when the caller sends it,
 * else the tenant (`tenant:<id>`), else `anonymous` on a server without API keys. The header is
 * a label the caller chooses, not a proof of identity: the API key decides what a caller may
 * touch, the actor only says who in that tenant did it.
 */
export function resolveActor(metadata: Metadata | undefined, tenant: TenantScope): string {
  const declared = String(metadata?.get(ACTOR_HEADER)[0] ?? '').trim().slice(0, MAX_ACTOR_CHARS);
  if (declared !== '') return declared;
  return tenant.tenantId === DEFAULT_TENANT ? 'anonymous' : `tenant:${tenant.tenantId}`;
}
