import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScanMemory, signBytes } from './scan-memory';
import { VectorIndex } from './vector-index';

/** A deterministic generator in [-0.5, 0.5) (a linear congruential one, as vector-kernel.spec's). */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31 - 0.5;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

/**
 * Dense rows around `clusters` centres, as a neural model's vectors cluster by topic: each row its
 * centre plus noise, so a query near a row has true neighbours that are near in every sense.
 */
function clustered(n: number, d: number, clusters: number, seed: number): Float32Array[] {
  const next = random(seed);
  const centres = Array.from({ length: clusters }, () => Float32Array.from({ length: d }, next));
  return Array.from({ length: n }, (_, i) => Float32Array.from(centres[i % clusters]!, (c) => c + 0.6 * next()));
}

/** Sparse rows the way hash embeddings are: a few dozen of d values set, the rest 0. */
function sparse(n: number, d: number, seed: number): Float32Array[] {
  const next = random(seed);
  return Array.from({ length: n }, () => {
    const v = new Float32Array(d);
    for (let j = 0; j < 24; j++) v[Math.floor((next() + 0.5) * d)] = next();
    return v;
  });
}

/** The Hamming distance of two vectors' signs (value > 0), written plainly. */
function signDistance(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let differ = 0;
  for (let i = 0; i < a.length; i++) if (a[i]! > 0 !== b[i]! > 0) differ++;
  return differ;
}

describe('the sign-bit prefilter', () => {
  afterEach(() => vi.restoreAllMocks());

  // Whole 16-byte steps at 384 and 512, a partial last step at 385 and 7, the largest d that keeps bits.
  for (const d of [384, 385, 512, 7, 3968]) {
    it(`counts the sign bits in which ${d}-dimension rows differ from the query, as a plain loop does`, () => {
      const n = 64;
      const memory = ScanMemory.create('int8', n, d)!;
      const next = random(d);
      for (let i = 0; i < n * d; i++) memory.rows[i] = Math.round(next() * 254);
      const query = Float32Array.from({ length: d }, next);
      const distances = Array.from(memory.hammingDistances(query));
      expect(distances).toEqual(Array.from({ length: n }, (_, row) => signDistance(memory.rows.subarray(row * d, (row + 1) * d), query)));
      expect(memory.hasSigns).toBe(true);
    });
  }

  it("takes a copied row's sign bits from its source once they are written there, and writes the others", () => {
    const [n, d] = [64, 384];
    const next = random(5);
    const source = ScanMemory.create('int8', n, d)!;
    for (let i = 0; i < n * d; i++) source.rows[i] = Math.round(next() * 254);
    const query = Float32Array.from({ length: d }, next);
    source.hammingDistances(query);
    // Rows in reverse order, the first half copied with their signs, the rest left to be written.
    const copy = ScanMemory.create('int8', n, d)!;
    for (let row = 0; row < n; row++) {
      copy.rows.set(source.rows.subarray((n - 1 - row) * d, (n - row) * d), row * d);
      if (row < n / 2) copy.copySigns(row, source, n - 1 - row);
    }
    const distances = Array.from(copy.hammingDistances(query));
    expect(distances).toEqual(Array.from({ length: n }, (_, row) => signDistance(copy.rows.subarray(row * d, (row + 1) * d), query)));
  });

  it('keeps no sign bits past 3,968 dimensions, where byte lanes could overflow', () => {
    expect([signBytes(3968), signBytes(3969)]).toEqual([496, 0]);
    expect(ScanMemory.create('int8', 10, 4000)!.hasSigns).toBe(false);
  });

  it('finds what an exact scan finds among dense rows, scoring a shortlist instead of every row', () => {
    const n = 24_000;
    const rows = clustered(n, 384, 300, 7);
    const prefiltered = VectorIndex.of(ids(n), rows, { precision: 'int8' });
    const exact = VectorIndex.of(ids(n), rows, { precision: 'int8', kernel: 'js' });
    const distances = vi.spyOn(ScanMemory.prototype, 'hammingDistances');
    const scans = vi.spyOn(ScanMemory.prototype, 'scanCodes');
    const next = random(99);
    for (const row of [3, 4_321, 23_999]) {
      const query = Float32Array.from(rows[row]!, (v) => v + 0.2 * next());
      // int8 scores are integers scaled alike by both kernels: the same to the bit.
      expect(prefiltered.search(query, 10)).toEqual(exact.search(query, 10));
    }
    expect([distances.mock.calls.length, scans.mock.calls.length]).toEqual([3, 0]);
  });

  it('scans every row of sparse vectors, and where a narrow group filter leaves too few near rows', () => {
    const n = 24_000;
    const hashed = VectorIndex.of(ids(n), sparse(n, 512, 3), { precision: 'int8' });
    const rows = clustered(n, 384, 300, 8);
    const groups = ids(n).map((_, i) => (i === 17 || i === 5_000 ? 'picked' : 'other'));
    const dense = VectorIndex.of(ids(n), rows, { precision: 'int8', groups });
    const distances = vi.spyOn(ScanMemory.prototype, 'hammingDistances');
    const scans = vi.spyOn(ScanMemory.prototype, 'scanCodes');
    expect(hashed.search(sparse(1, 512, 4)[0]!, 10)).toHaveLength(10);
    expect(distances).not.toHaveBeenCalled();
    expect(dense.search(rows[17]!, 10, new Set(['picked'])).map((h) => h.item)).toEqual(['v17', 'v5000']);
    expect([distances.mock.calls.length, scans.mock.calls.length]).toEqual([1, 2]);
  });
});
