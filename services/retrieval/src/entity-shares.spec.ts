import { describe, expect, it } from 'vitest';
import { chunksByEntityShares } from './entity-shares';
import type { MentionReads } from './entity-shares';

const scope = { tenantId: 't', kbId: 'kb' };

/** Mentions as entity → chunk ids, read through the two directions the ranking uses; counts what was read. */
function mentionsOf(byEntity: Map<string, string[]>): MentionReads & { entitiesRead: string[] } {
  const entitiesRead: string[] = [];
  return {
    entitiesRead,
    async chunkIdsForEntities(_scope, ids) {
      entitiesRead.push(...ids);
      return new Map(ids.filter((id) => byEntity.has(id)).map((id) => [id, [...byEntity.get(id)!]]));
    },
    async entityIdsForChunks(_scope, chunkIds, among) {
      const out = new Map<string, string[]>();
      for (const [entity, chunks] of byEntity) {
        if (among !== undefined && !among.includes(entity)) continue;
        for (const c of chunks) if (chunkIds.includes(c)) out.set(c, [...(out.get(c) ?? []), entity]);
      }
      return out;
    },
  };
}

/** Every mention read, every share summed: what the ranking must equal. */
function bruteForce(byEntity: Map<string, string[]>, scores: Map<string, number>, depth: number): Array<[string, number]> {
  const totals = new Map<string, number>();
  for (const [entity, chunks] of byEntity) for (const c of chunks) totals.set(c, (totals.get(c) ?? 0) + (scores.get(entity) ?? 0) / chunks.length);
  return [...totals].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, depth);
}

/** A deterministic graph: a few hubs mentioned by thousands of chunks, many entities by a few. */
function graph(seed: number): { byEntity: Map<string, string[]>; scores: Map<string, number> } {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const byEntity = new Map<string, string[]>();
  const scores = new Map<string, number>();
  for (let e = 0; e < 60; e++) {
    const hub = e < 4;
    const n = hub ? 3000 + Math.floor(random() * 1000) : 1 + Math.floor(random() * 12);
    byEntity.set(`e${e}`, [...new Set(Array.from({ length: n }, () => `c${Math.floor(random() * 5000)}`))]);
    scores.set(`e${e}`, 0.2 + random());
  }
  return { byEntity, scores };
}

describe('chunksByEntityShares', () => {
  it('ranks as reading every mention does, without reading the hubs', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const { byEntity, scores } = graph(seed);
      const counts = new Map([...byEntity].map(([id, chunks]) => [id, chunks.length]));
      const reads = mentionsOf(byEntity);
      const ranked = await chunksByEntityShares(reads, scope, scores, counts, 120);
      const expected = bruteForce(byEntity, scores, 120);
      expect(ranked.map(([id]) => id)).toEqual(expected.map(([id]) => id));
      ranked.forEach(([, score], i) => expect(score).toBeCloseTo(expected[i]![1], 12));
      expect(reads.entitiesRead.filter((id) => ['e0', 'e1', 'e2', 'e3'].includes(id))).toEqual([]);
    }
  });

  it('reads everything when a score is negative or a count is missing, and still ranks exactly', async () => {
    const { byEntity, scores } = graph(7);
    const counts = new Map([...byEntity].map(([id, chunks]) => [id, chunks.length]));
    counts.delete('e0');
    const reads = mentionsOf(byEntity);
    expect((await chunksByEntityShares(reads, scope, scores, counts, 50)).map(([id]) => id)).toEqual(bruteForce(byEntity, scores, 50).map(([id]) => id));
    expect(reads.entitiesRead).toContain('e0');

    scores.set('e10', -0.5);
    const all = mentionsOf(byEntity);
    const ranked = await chunksByEntityShares(all, scope, scores, new Map([...byEntity].map(([id, c]) => [id, c.length])), 50);
    expect(ranked.map(([id]) => id)).toEqual(bruteForce(byEntity, scores, 50).map(([id]) => id));
    expect(new Set(all.entitiesRead).size).toBe(60);
  });
});
