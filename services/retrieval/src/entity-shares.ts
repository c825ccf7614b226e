import type { GraphReadRepository } from '@trellis/storage';
import type { KbScope } from '@trellis/contracts';

/** Mention rows read per statement while the ranking is not yet settled. */
const MENTION_BATCH = 2_000;

export type MentionReads = Pick<GraphReadRepository, 'chunkIdsForEntities' | 'entityIdsForChunks'>;

interface Seed {
  readonly id: string;
  readonly score: number;
  /** The most a chunk can gain from it: its score over the chunks its mention count says. */
  readonly bound: number;
}

/** Chunks whose total the unread entities might still change, read by chunk at most. */
const MAX_CANDIDATES = 2_000;

/**
 * The `depth` best chunks, best first (ties by chunk id), when each entity's relevance is
 * shared among the chunks that mention it and a chunk scores the sum of its shares: an entity
 * mentioned everywhere says little about any one chunk.
 *
 * The exact answer without reading every mention. Entities are read in the order of their
 * largest possible share (score over mention count). Once the `depth`-th best total so far is
 * more than the entities not yet read could add to any one chunk, no chunk unseen can enter;
 * the chunks seen that could still reach it get the shares of the unread entities they mention
 * (read by chunk, a few rows each), and the best of them are the answer. At 100k chunks a hub
 * entity ("Add", "List") has up to 4,000 mentions, and reading every mention of a walk's
 * entities took 47 ms a query; a hub's share of a chunk is a 4,000th of its score.
 * `mentionCounts` are the entities' counts of mentions (one absent is read before any stop);
 * with a negative score, which a bound cannot cover, everything is read.
 */
export async function chunksByEntityShares(
  reads: MentionReads,
  scope: KbScope,
  scores: ReadonlyMap<string, number>,
  mentionCounts: ReadonlyMap<string, number>,
  depth: number,
): Promise<Array<[string, number]>> {
  const seeds: Seed[] = [...scores].map(([id, score]) => {
    const count = mentionCounts.get(id);
    return { id, score, bound: count === undefined ? Math.max(0, score) : score / Math.max(1, count) };
  });
  seeds.sort((a, b) => b.bound - a.bound || codeUnitOrder(a.id, b.id));
  const mayStop = seeds.every((s) => s.score >= 0);
  const totals = new Map<string, number>();
  let unread = seeds.reduce((sum, s) => sum + s.bound, 0);
  let next = 0;
  while (next < seeds.length) {
    const batch = takeBatch(seeds, next, mentionCounts);
    next += batch.length;
    const chunkIds = await reads.chunkIdsForEntities(scope, batch.map((s) => s.id));
    for (const seed of batch) {
      unread -= seed.bound;
      const chunks = chunkIds.get(seed.id) ?? [];
      for (const chunkId of chunks) totals.set(chunkId, (totals.get(chunkId) ?? 0) + seed.score / Math.max(1, chunks.length));
    }
    const rest = seeds.slice(next);
    if (rest.length === 0 || !mayStop || !rest.every((s) => mentionCounts.has(s.id))) continue;
    const open = stillOpen(totals, depth, Math.max(0, unread));
    if (open !== null) return best(await withUnread(reads, scope, totals, open, rest), depth);
  }
  return best(totals, depth);
}

function takeBatch(seeds: readonly Seed[], from: number, mentionCounts: ReadonlyMap<string, number>): Seed[] {
  const batch: Seed[] = [];
  let rows = 0;
  for (let i = from; i < seeds.length; i++) {
    const count = mentionCounts.get(seeds[i]!.id) ?? MENTION_BATCH;
    // A batch stops before the entity that would take it past MENTION_BATCH rows (a hub, mostly).
    if (batch.length > 0 && rows + count > MENTION_BATCH) break;
    batch.push(seeds[i]!);
    rows += count;
  }
  return batch;
}

/**
 * The chunks that may still be among the best `depth`, or null while a chunk not seen yet could
 * be (the `depth`-th total is not above `unread`) or too many could.
 */
function stillOpen(totals: ReadonlyMap<string, number>, depth: number, unread: number): string[] | null {
  const ranked = best(totals, Infinity);
  if (ranked.length < depth || ranked[depth - 1]![1] <= unread) return null;
  const floor = ranked[depth - 1]![1];
  const open = ranked.filter(([, total]) => total + unread >= floor).map(([id]) => id);
  return open.length > MAX_CANDIDATES ? null : open;
}

/** The totals of `chunkIds` with the shares of the unread entities each mentions. */
async function withUnread(
  reads: MentionReads,
  scope: KbScope,
  totals: ReadonlyMap<string, number>,
  chunkIds: readonly string[],
  unreadSeeds: readonly Seed[],
): Promise<Map<string, number>> {
  // Every unread entity has a count (see the stop), so its bound is its share of a chunk. Only
  // their mentions are read: a chunk's other entities add nothing here.
  const shareOf = new Map(unreadSeeds.map((s) => [s.id, s.bound]));
  const mentioned = await reads.entityIdsForChunks(scope, chunkIds, unreadSeeds.map((s) => s.id));
  return new Map(
    chunkIds.map((chunkId) => {
      let exact = totals.get(chunkId) ?? 0;
      for (const entityId of mentioned.get(chunkId) ?? []) exact += shareOf.get(entityId) ?? 0;
      return [chunkId, exact];
    }),
  );
}

function best(totals: ReadonlyMap<string, number>, depth: number): Array<[string, number]> {
  return [...totals].sort((a, b) => b[1] - a[1] || codeUnitOrder(a[0], b[0])).slice(0, depth);
}

function codeUnitOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
