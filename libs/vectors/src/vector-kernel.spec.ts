import { afterEach, describe, expect, it, vi } from 'vitest';
import { kernelModule, wasmApi } from './vector-kernel';
import { VectorIndex } from './vector-index';
import type { MatrixPrecision } from './vector-index';

/** Deterministic vectors with the shape of text embeddings: many small components, a few larger. */
function vectors(n: number, d: number, seed: number): Float32Array[] {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  return Array.from({ length: n }, () => Float32Array.from({ length: d }, () => next() ** 3));
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);

/** Every row's score, through the public API: a search for all n rows ranks them all. */
const allScores = (index: VectorIndex, q: Float32Array) => new Map(index.search(q, index.size).map((h) => [h.item, h.score]));

describe('the SIMD vector scan', () => {
  afterEach(() => vi.restoreAllMocks());

  it('is validated by this engine (Node 20 has WebAssembly SIMD)', () => {
    expect(kernelModule()).not.toBeNull();
  });

  // Whole steps at 384 and 512 (16 floats, 32 codes); 385 leaves a tail of one, 400 one step of 16 codes, 7 is all tail.
  for (const d of [384, 385, 400, 512, 7]) {
    for (const precision of ['float32', 'int8'] as const satisfies readonly MatrixPrecision[]) {
      it(`scores ${precision} rows of ${d} dimensions as the JS loops do`, () => {
        const n = 700;
        const rows = vectors(n, d, d);
        const simd = VectorIndex.of(ids(n), rows, { precision, kernel: 'simd' });
        const js = VectorIndex.of(ids(n), rows, { precision, kernel: 'js' });
        expect([simd.kernel, js.kernel]).toEqual(['simd', 'js']);
        for (const q of vectors(5, d, d + 1)) {
          const want = allScores(js, q);
          const got = allScores(simd, q);
          expect(got.size).toBe(n);
          for (const [id, score] of got) {
            // int8 sums are integers and the scaling is the same float64 product: equal to the bit.
            if (precision === 'int8') expect(score).toBe(want.get(id));
            else expect(Math.abs(score - want.get(id)!)).toBeLessThan(1e-5);
          }
          expect(simd.search(q, 40).map((h) => h.item)).toEqual(js.search(q, 40).map((h) => h.item));
        }
      });
    }
  }

  it('searches an index of no rows', () => {
    const none = VectorIndex.of([], [], { kernel: 'simd' });
    expect(none.search(new Float32Array(384), 10)).toEqual([]);
    const source = VectorIndex.of(['a'], vectors(1, 384, 3), { precision: 'int8', kernel: 'simd' });
    const empty = VectorIndex.assembled([], [source], { kernel: 'simd' })!;
    expect([empty.size, empty.dimensions, empty.kernel, empty.bytes]).toEqual([0, 384, 'simd', 0]);
    expect(empty.search(vectors(1, 384, 4)[0]!, 5)).toEqual([]);
  });

  it('assembles rows into its memory as stored, from sources of either kernel', () => {
    for (const precision of ['float32', 'int8'] as const) {
      const rows = vectors(300, 385, 11);
      const wholeBy = { js: VectorIndex.of(ids(300), rows, { precision, kernel: 'js' }), simd: VectorIndex.of(ids(300), rows, { precision, kernel: 'simd' }) };
      const older = VectorIndex.of(ids(300).slice(0, 200), rows.slice(0, 200), { precision, kernel: 'simd' });
      const newer = VectorIndex.of(ids(300).slice(150), rows.slice(150), { precision, kernel: 'js' });
      const shuffled = ids(300).reverse();
      for (const kernel of ['simd', 'js'] as const) {
        const assembled = VectorIndex.assembled(shuffled, [newer, older], { kernel })!;
        // Compared with an index of the same kernel: the kernels sum floats in different orders.
        const whole = wholeBy[kernel];
        expect([assembled.kernel, assembled.bytes]).toEqual([kernel, whole.bytes]);
        for (const q of vectors(3, 385, 12)) {
          const want = allScores(whole, q);
          for (const [id, score] of allScores(assembled, q)) expect(Math.abs(score - want.get(id)!)).toBeLessThan(1e-5);
          expect(assembled.similarities(q, ids(300))).toEqual(whole.similarities(q, ids(300)));
        }
      }
    }
  });

  it('chooses SIMD for large indexes unless told, and JS for small ones', () => {
    expect(VectorIndex.of(ids(200), vectors(200, 384, 5)).kernel).toBe('simd');
    expect(VectorIndex.of(ids(20), vectors(20, 384, 5)).kernel).toBe('js');
    expect(VectorIndex.of(ids(200), vectors(200, 384, 5), { kernel: 'js' }).kernel).toBe('js');
  });

  it('falls back to the JS loops where the engine does not validate SIMD', async () => {
    vi.resetModules();
    vi.spyOn(wasmApi()!, 'validate').mockReturnValue(false);
    const fresh = await import('./vector-index.js');
    const rows = vectors(200, 384, 6);
    const index = fresh.VectorIndex.of(ids(200), rows, { kernel: 'simd' });
    expect(index.kernel).toBe('js');
    expect(index.search(rows[17]!, 1)[0]).toMatchObject({ item: 'v17' });
  });
});
