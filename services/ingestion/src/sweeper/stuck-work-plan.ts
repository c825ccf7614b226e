import type { IndexStatus, KbScope } from '@trellis/contracts';
import type { StuckChunk, StuckDocument } from '@trellis/storage';

/** The stuck work of one document version, and what the sweeper does with it. */
export interface SweepAction {
  readonly kind: 'redrive' | 'give-up';
  readonly scope: KbScope;
  readonly documentId: string;
  readonly version: number;
  /** Set when the document itself never left `pending`: `document.ingested` is re-published. */
  readonly document: StuckDocument | null;
  /** Chunks waiting in `embedded` or `extracted`: `chunk.ready` is re-published for each. */
  readonly chunks: readonly StuckChunk[];
  /** For give-up: the error the document (and its stuck chunks) fail with. */
  readonly reason?: string;
}

/**
 * Groups what the store found stuck by document version (one re-drive counts once per version
 * and sweep) and decides: re-drive it again, or give up on a version that was re-driven
 * `maxRedrives` times and is still stuck, so a poison item cannot loop forever.
 */
export function planSweep(documents: readonly StuckDocument[], chunks: readonly StuckChunk[], maxRedrives: number): SweepAction[] {
  const groups = new Map<string, { scope: KbScope; documentId: string; version: number; redriveCount: number; document: StuckDocument | null; chunks: StuckChunk[] }>();
  const groupOf = (item: StuckDocument | StuckChunk) => {
    const key = `${item.tenantId}\u0000${item.kbId}\u0000${item.documentId}\u0000${item.version}`;
    let group = groups.get(key);
    if (group === undefined) {
      group = { scope: { tenantId: item.tenantId, kbId: item.kbId }, documentId: item.documentId, version: item.version, redriveCount: item.redriveCount, document: null, chunks: [] };
      groups.set(key, group);
    }
    return group;
  };
  for (const d of documents) groupOf(d).document = d;
  for (const c of chunks) groupOf(c).chunks.push(c);
  return [...groups.values()].map((g) => {
    const base = { scope: g.scope, documentId: g.documentId, version: g.version, document: g.document, chunks: g.chunks };
    if (g.redriveCount < maxRedrives) return { kind: 'redrive', ...base };
    return { kind: 'give-up', ...base, reason: giveUpReason(g.document, g.chunks, maxRedrives) };
  });
}

function giveUpReason(document: StuckDocument | null, chunks: readonly StuckChunk[], maxRedrives: number): string {
  const where = document !== null ? `document stuck in ${document.status}` : `${chunks.length} chunk(s) stuck in ${statuses(chunks).join('/')}`;
  return `indexing gave up: ${where} after ${maxRedrives} re-drives by the sweeper (TRELLIS_MAX_REDRIVES); no stage finished its event`;
}

function statuses(chunks: readonly StuckChunk[]): IndexStatus[] {
  return [...new Set(chunks.map((c) => c.status))].sort();
}
