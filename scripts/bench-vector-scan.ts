// npm run bench:vector-scan [-- --searches N] — the exact vector scan, JS loops against the
// WebAssembly SIMD kernel, at the 100k corpus's row counts: 102,632 chunk rows (float32) and
// 183,488 relationship rows (int8), 384 dimensions. Each table's rows are built once and copied as
// stored into an index of each kernel, so both scan the same bytes; the searches (k = 40) then
// alternate between the two kernels query by query, so a burst of load on this shared machine
// falls on both and not on one. Prints the median and p95 ms per search, each series with the
// load average (/proc/loadavg) when it ended.
import { readFileSync } from 'node:fs';
import { VectorIndex } from '@trellis/vectors';
import type { MatrixPrecision } from '@trellis/vectors';
import { machine, option, percentile } from './bench-kit.mjs';

const DIMENSIONS = 384;
const K = 40;
const searches = Number(option('searches', '50'));
const tables: Array<{ name: string; rows: number; precision: MatrixPrecision }> = [
  { name: 'chunks', rows: 102_632, precision: 'float32' },
  { name: 'relationships', rows: 183_488, precision: 'int8' },
];

/** A fast deterministic generator (xorshift32): the values only need to be spread, not good. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32 - 0.5;
  };
}

/**
 * One table's rows in an index of each kernel. Built in batches assembled into one, so no more
 * than a batch of vectors is ever held as Float32Arrays (183,488 of them would be 280 MB).
 */
function build(rows: number, precision: MatrixPrecision): { js: VectorIndex; simd: VectorIndex } {
  const next = random(rows);
  const batches: VectorIndex[] = [];
  const ids: string[] = [];
  for (let start = 0; start < rows; start += 10_000) {
    const batchIds = Array.from({ length: Math.min(10_000, rows - start) }, (_, i) => `r${start + i}`);
    const vectors = batchIds.map(() => Float32Array.from({ length: DIMENSIONS }, next));
    batches.push(VectorIndex.of(batchIds, vectors, { precision, kernel: 'js' }));
    ids.push(...batchIds);
  }
  const simd = VectorIndex.assembled(ids, batches, { kernel: 'simd' })!;
  const js = VectorIndex.assembled(ids, [simd], { kernel: 'js' })!;
  if (simd.kernel !== 'simd') throw new Error('WebAssembly SIMD is not available in this Node');
  return { js, simd };
}

/** "1.23 2.34 3.45": the 1, 5 and 15 minute load averages, as /proc/loadavg has them. */
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const ms = (values: number[], p: number) => percentile(values, p).toFixed(2).padStart(7);

console.log(`vector scan: ${searches} searches (k = ${K}) per kernel, alternating; ${machine()}; load ${load()}`);
for (const table of tables) {
  const { js, simd } = build(table.rows, table.precision);
  const next = random(7);
  const queries = Array.from({ length: searches + 5 }, () => Float32Array.from({ length: DIMENSIONS }, next));
  const times = { js: [] as number[], simd: [] as number[] };
  let differing = 0;
  queries.forEach((q, i) => {
    const started = performance.now();
    const a = js.search(q, K);
    const between = performance.now();
    const b = simd.search(q, K);
    const ended = performance.now();
    // The first five warm both paths up (JIT tiers, first touch of the pages) and are not timed.
    if (i >= 5) {
      times.js.push(between - started);
      times.simd.push(ended - between);
    }
    if (a.some((hit, rank) => hit.item !== b[rank]?.item)) differing++;
  });
  const loadAfter = load();
  console.log(`${table.name}: ${table.rows.toLocaleString('en')} × ${DIMENSIONS} ${table.precision} (${(simd.bytes / 2 ** 20).toFixed(0)} MiB of rows)`);
  console.log(`  js    median ${ms(times.js, 50)} ms  p95 ${ms(times.js, 95)} ms  (load ${loadAfter})`);
  console.log(`  simd  median ${ms(times.simd, 50)} ms  p95 ${ms(times.simd, 95)} ms  (load ${loadAfter})`);
  console.log(`  speed-up (median) ${(percentile(times.js, 50) / percentile(times.simd, 50)).toFixed(2)}×; searches whose top ${K} differ in order: ${differing} of ${queries.length}`);
}
