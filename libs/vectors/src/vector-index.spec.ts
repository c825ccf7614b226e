import { describe, expect, it } from 'vitest';
import { stampDigest } from './stamp-digest';
import { VectorIndex } from './vector-index';
import type { RowListing } from './vector-index';

/** Deterministic vectors with the shape of text embeddings: many small components, a few larger. */
function vectors(n: number, d: number, seed = 7): Float32Array[] {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: n }, () => Float32Array.from({ length: d }, () => next() ** 3));
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

describe('VectorIndex', () => {
  const n = 2000;
  const d = 384;
  const rows = vectors(n, d);
  const queries = vectors(20, d, 99);
  const exact = VectorIndex.of(ids(n), rows);
  const quantised = VectorIndex.of(ids(n), rows, { precision: 'int8' });

  it('ranks with int8 rows as with exact ones, in a quarter of the memory', () => {
    let overlap = 0;
    for (const q of queries) {
      const want = new Set(exact.search(q, 10).map((h) => h.item));
      overlap += quantised.search(q, 10).filter((h) => want.has(h.item)).length;
    }
    expect(overlap / (10 * queries.length)).toBeGreaterThanOrEqual(0.95);
    expect(quantised.bytes).toBeLessThan(exact.bytes / 3.9);
  });

  it('gives int8 similarities within 0.01 of the exact cosine', () => {
    const some = ids(n).slice(0, 200);
    for (const q of queries.slice(0, 5)) {
      const want = exact.similarities(q, some);
      for (const [id, score] of quantised.similarities(q, some)) expect(Math.abs(score - want.get(id)!)).toBeLessThan(0.01);
    }
    // A row's own vector is still its best match, at about 1.
    const [top] = quantised.search(rows[42]!, 1);
    expect(top).toMatchObject({ item: 'v42' });
    expect(top!.score).toBeCloseTo(1, 2);
  });

  it('assembles a refreshed index from rows as stored, the newest source first', () => {
    const changed = vectors(1, d, 5)[0]!;
    const batch = VectorIndex.of(['v1', 'new'], [changed, rows[3]!], { precision: 'int8' });
    const refreshed = VectorIndex.assembled(['v0', 'v1', 'new'], [batch, quantised], { digests: ['a', 'b', 'c'].map(stampDigest) })!;
    expect(refreshed.precision).toBe('int8');
    expect([refreshed.holds('new', stampDigest('c')), refreshed.holds('new', stampDigest('b')), refreshed.holds('gone', stampDigest('c'))]).toEqual([true, false, false]);
    const q = queries[0]!;
    // Kept rows are copied bit for bit, changed ones come from the batch.
    expect(refreshed.similarities(q, ['v0']).get('v0')).toBe(quantised.similarities(q, ['v0']).get('v0'));
    expect(refreshed.similarities(q, ['v1']).get('v1')).toBe(batch.similarities(q, ['v1']).get('v1'));
    expect(refreshed.search(changed, 1)[0]!.item).toBe('v1');
  });

  it('finds the k best of every row, as a sort of all similarities does, with groups and tied rows', () => {
    // Tied rows: copies of rows already present (a scan that passes over rows below the k-th
    // best must still keep the first of equals, as the sort below does).
    const tied = [...rows.slice(0, 300), ...rows.slice(0, 300)];
    const tiedIds = ids(tied.length);
    const groups = tiedIds.map((_, i) => (i % 3 === 0 ? 'a' : 'b'));
    for (const precision of ['float32', 'int8'] as const) {
      const index = VectorIndex.of(tiedIds, tied, { precision, groups });
      expect(index.kernel).toBe('simd');
      for (const q of queries.slice(0, 5)) {
        const all = [...index.similarities(q, tiedIds)].map(([item, score]) => ({ item, score, row: tiedIds.indexOf(item) }));
        // By id or by scan, a row scores the same float32, from the same kernel.
        const sorted = (rows: typeof all) => rows.sort((x, y) => y.score - x.score || x.row - y.row).map(({ item, score }) => ({ item, score }));
        expect(index.search(q, 25)).toEqual(sorted([...all]).slice(0, 25));
        expect(index.search(q, 7, new Set(['a']))).toEqual(sorted(all.filter((h) => groups[h.row] === 'a')).slice(0, 7));
      }
    }
  });

  it('refuses to assemble rows of different shapes', () => {
    expect(VectorIndex.assembled(['v0'], [VectorIndex.of(['x'], vectors(1, 8)), exact])).toBeNull();
    expect(VectorIndex.assembled(['v0'], [VectorIndex.of(['v0'], [rows[0]!]), quantised])).toBeNull();
  });

  it('keeps a zero vector at similarity 0 in either precision', () => {
    const zero = new Float32Array(d);
    for (const precision of ['float32', 'int8'] as const) {
      const index = VectorIndex.of(['z', 'v'], [zero, rows[0]!], { precision });
      expect(index.similarities(rows[0]!, ['z']).get('z')).toBe(0);
    }
  });
});

describe('VectorIndex.filling', () => {
  const rows = vectors(10_000, 24);
  const names = ids(10_000);
  const slice = (from: number, to: number) => {
    const packed = new Float32Array((to - from) * 24);
    for (let row = from; row < to; row++) packed.set(rows[row]!, (row - from) * 24);
    return { ids: names.slice(from, to), digests: Float64Array.from(names.slice(from, to), (id) => stampDigest(`stamp of ${id}`)), groups: [], vectors: packed };
  };

  it('stores slice after slice what `of` stores at once, with their stamps', () => {
    for (const precision of ['float32', 'int8'] as const) {
      const filling = VectorIndex.filling(10_000, 24, { precision });
      for (let from = 0; from < 10_000; from += 3000) filling.add(slice(from, Math.min(10_000, from + 3000)));
      const filled = filling.index();
      const query = rows[1234]!;
      expect(filled.search(query, 10)).toEqual(VectorIndex.of(names, rows, { precision }).search(query, 10));
      expect(filled.search(query, 1)[0]!.item).toBe('v1234');
      expect([filled.size, filled.holds('v9999', stampDigest('stamp of v9999')), filled.holds('v9999', stampDigest('stamp of v9998'))]).toEqual([10_000, true, false]);
    }
  });

  it('refuses rows past the count it was sized for, and an index short of them', () => {
    const filling = VectorIndex.filling(10, 24);
    filling.add(slice(0, 6));
    expect(() => filling.add(slice(6, 12))).toThrow('sized for 10 rows was sent more');
    expect(() => filling.index()).toThrow('sized for 10 rows was sent 6');
  });
});

describe('VectorIndex.refreshInPlace', () => {
  const FIRST = stampDigest('first');
  const CHANGED = stampDigest('changed');
  const listing = (rows: ReadonlyArray<{ id: string; digest: number; group: string }>): RowListing => ({ ids: rows.map((r) => r.id), digests: Float64Array.from(rows, (r) => r.digest), groups: rows.map((r) => r.group) });
  // Past PREFILTER_MIN_ROWS, so searches rank by sign bits first: moved rows must take theirs along.
  const n = 21_000;
  const d = 64;
  const rows = vectors(n, d, 3);
  const changedRows = vectors(n, d, 5);
  const added = vectors(n, d, 11);
  const queries = vectors(8, d, 13);
  const group = (id: string) => (id.length % 2 === 0 ? 'a' : 'b');

  /** Every 7th row removed, every 11th changed, a new row after every 5th: in the order a read lists them. */
  function refreshOf(): { listed: Array<{ id: string; digest: number; group: string; vector: Float32Array }>; fresh: Array<{ id: string; vector: Float32Array }> } {
    const listed: Array<{ id: string; digest: number; group: string; vector: Float32Array }> = [];
    const fresh: Array<{ id: string; vector: Float32Array }> = [];
    for (let i = 0; i < n; i++) {
      if (i % 7 === 0) continue;
      const id = `v${i}`;
      if (i % 11 === 0) {
        listed.push({ id, digest: CHANGED, group: group(id), vector: changedRows[i]! });
        fresh.push({ id, vector: changedRows[i]! });
      } else listed.push({ id, digest: FIRST, group: group(id), vector: rows[i]! });
      if (i % 5 === 0) {
        const newId = `w${i}`;
        listed.push({ id: newId, digest: FIRST, group: group(newId), vector: added[i]! });
        fresh.push({ id: newId, vector: added[i]! });
      }
    }
    return { listed, fresh };
  }

  it('gives what an index built from the rows anew gives, searched with and without groups', () => {
    for (const precision of ['float32', 'int8'] as const) {
      const names = ids(n);
      const previous = VectorIndex.of(names, rows, { precision, groups: names.map(group), digests: names.map(() => FIRST), capacity: Math.ceil(n * 1.25) });
      // Searched once, so sign bits are written and must move with their rows.
      previous.search(queries[0]!, 10);
      const { listed, fresh } = refreshOf();
      expect(listed.length).toBeGreaterThan(n);
      // Two batches, as a refresh reads them.
      const half = Math.floor(fresh.length / 2);
      const batches = [fresh.slice(0, half), fresh.slice(half)].map((b) => VectorIndex.of(b.map((f) => f.id), b.map((f) => f.vector), { precision }));
      expect(previous.refreshInPlace(listing(listed), batches)).toBe(true);
      const anew = VectorIndex.of(listed.map((r) => r.id), listed.map((r) => r.vector), { precision, groups: listed.map((r) => r.group) });
      expect(previous.size).toBe(listed.length);
      for (const q of queries) {
        expect(previous.search(q, 10)).toEqual(anew.search(q, 10));
        expect(previous.search(q, 5, new Set(['a']))).toEqual(anew.search(q, 5, new Set(['a'])));
      }
      expect(previous.similarities(queries[1]!, ['v11', 'w5', 'v1', 'v7'])).toEqual(anew.similarities(queries[1]!, ['v11', 'w5', 'v1', 'v7']));
      expect([previous.holds('v11', CHANGED), previous.holds('v11', FIRST), previous.holds('w5', FIRST), previous.holds('v7', FIRST)]).toEqual([true, false, true, false]);
    }
  });

  it('changes nothing where it cannot refresh in place', () => {
    const names = ids(n);
    const fresh = () => VectorIndex.of(['new'], [added[0]!]);
    const held = (id: string) => ({ id, digest: FIRST, group: '' });
    const tight = VectorIndex.of(names, rows, { digests: names.map(() => FIRST) });
    const roomy = VectorIndex.of(names, rows, { digests: names.map(() => FIRST), capacity: n + 10 });
    const before = roomy.search(queries[0]!, 10);
    // No room for one more row.
    expect(tight.refreshInPlace(listing([...names.map(held), { id: 'new', digest: stampDigest('x'), group: '' }]), [fresh()])).toBe(false);
    // Two kept rows in another order than the index holds them.
    expect(roomy.refreshInPlace(listing([held('v1'), held('v0'), ...names.slice(2).map(held)]), [])).toBe(false);
    // A row neither fresh nor held with that stamp.
    expect(roomy.refreshInPlace(listing([{ id: 'v0', digest: stampDigest('other'), group: '' }]), [])).toBe(false);
    // Fresh rows of another shape.
    expect(roomy.refreshInPlace(listing(names.map(held)), [VectorIndex.of(['v0'], [new Float32Array(8)])])).toBe(false);
    // Rows kept in JS arrays (a small index).
    expect(VectorIndex.of(['a'], [rows[0]!], { capacity: 4 }).refreshInPlace(listing([held('a')]), [])).toBe(false);
    expect([roomy.size, roomy.search(queries[0]!, 10)]).toEqual([n, before]);
  });
});
