import { createHash } from 'node:crypto';

/**
 * Deterministic ids: the same inputs always give the same id, which is what makes every
 * event handler idempotent (a replayed event upserts the rows it wrote the first time).
 */
export function stableId(prefix: string, ...parts: Array<string | number>): string {
  const hash = createHash('sha256');
  for (const part of parts) {
    hash.update(String(part));
    hash.update('\u0000');
  }
  return `${prefix}_${hash.digest('hex').slice(0, 24)}`;
}

/** sha256 of content, hex. */
export function contentHash(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/** The tenant every row of a standalone installation belongs to. */
export const DEFAULT_TENANT = 'default';

/** Every read and write names the tenant; most also name the knowledge base. */
export interface TenantScope {
  readonly tenantId: string;
}

export interface KbScope extends TenantScope {
  readonly kbId: string;
}
