// npm run bench:vector-scan [-- --searches N] — the vector scan at the 100k corpus's row counts
// (102,632 chunk rows and 183,488 relationship rows of 384 int8 codes): the JS loops and the
// WebAssembly SIMD kernel scoring every row, and the SIMD index as it searches by default, where
// from 20,000 rows a sign-bit prefilter ranks every row by Hamming distance and scores only a
// shortlist. The rows are dense and clustered (centres plus noise), as a neural model's vectors
// are: on unstructured random vectors no shortlist finds the true neighbours. Each table's rows
// are built once and copied as stored into an index of each kind, so all scan the same bytes; the
// searches then alternate between them query by query, so a burst of load on this shared machine
// falls on all and not on one. Prints the median and p95 ms per search, each series with the load
// average (/proc/loadavg) when it ended, and how many of the exact top 10 and top 40 the default
// search found.
import { readFileSync } from 'node:fs';
import { VectorIndex } from '@trellis/vectors';
import type { MatrixPrecision } from '@trellis/vectors';
import { machine, option, percentile } from './bench-kit.mjs';

const DIMENSIONS = 384;
const K = 40;
const searches = Number(option('searches', '50'));
const tables: Array<{ name: string; rows: number; precision: MatrixPrecision }> = [
  { name: 'chunks', rows: 102_632, precision: 'int8' },
  { name: 'relationships', rows: 183_488, precision: 'int8' },
];
/** Topics the rows gather around, and how far a row strays from its topic's centre. */
const CLUSTERS = 2_000;
const NOISE = 0.6;

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
 * One table's rows in an index of each kind. Built in batches assembled into one, so no more
 * than a batch of vectors is ever held as Float32Arrays (183,488 of them would be 280 MB).
 */
function build(rows: number, precision: MatrixPrecision): { js: VectorIndex; exact: VectorIndex; simd: VectorIndex; centres: Float32Array[] } {
  const next = random(rows);
  const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: DIMENSIONS }, next));
  const batches: VectorIndex[] = [];
  const ids: string[] = [];
  for (let start = 0; start < rows; start += 10_000) {
    const batchIds = Array.from({ length: Math.min(10_000, rows - start) }, (_, i) => `r${start + i}`);
    const vectors = batchIds.map((_, i) => Float32Array.from(centres[(start + i) % CLUSTERS]!, (c) => c + NOISE * next()));
    batches.push(VectorIndex.of(batchIds, vectors, { precision, kernel: 'js' }));
    ids.push(...batchIds);
  }
  const simd = VectorIndex.assembled(ids, batches, { kernel: 'simd' })!;
  const exact = VectorIndex.assembled(ids, [simd], { kernel: 'simd', prefilter: false })!;
  const js = VectorIndex.assembled(ids, [simd], { kernel: 'js' })!;
  if (simd.kernel !== 'simd') throw new Error('WebAssembly SIMD is not available in this Node');
  return { js, exact, simd, centres };
}

/** "1.23 2.34 3.45": the 1, 5 and 15 minute load averages, as /proc/loadavg has them. */
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const ms = (values: number[], p: number) => percentile(values, p).toFixed(2).padStart(7);

console.log(`vector scan: ${searches} searches (k = ${K}) per kind, alternating; ${machine()}; load ${load()}`);
for (const table of tables) {
  const { js, exact, simd, centres } = build(table.rows, table.precision);
  const next = random(7);
  // Questions near a topic, as a question is near the passages that answer it.
  const queries = Array.from({ length: searches + 5 }, (_, i) => Float32Array.from(centres[(i * 7919) % CLUSTERS]!, (c) => c + NOISE * next()));
  const kinds = { js, exact, simd };
  const times = { js: [] as number[], exact: [] as number[], simd: [] as number[] };
  let differing = 0;
  const found = { top10: 0, top40: 0 };
  queries.forEach((q, i) => {
    const hits: Partial<Record<keyof typeof kinds, Array<{ item: string }>>> = {};
    for (const kind of Object.keys(kinds) as Array<keyof typeof kinds>) {
      const started = performance.now();
      hits[kind] = kinds[kind].search(q, K);
      // The first five warm every path up (JIT tiers, first touch of the pages) and are not timed.
      if (i >= 5) times[kind].push(performance.now() - started);
    }
    if (hits.js!.some((hit, rank) => hit.item !== hits.exact![rank]?.item)) differing++;
    const got = new Set(hits.simd!.map((hit) => hit.item));
    found.top40 += hits.exact!.filter((hit) => got.has(hit.item)).length;
    const got10 = new Set(simd.search(q, 10).map((hit) => hit.item));
    found.top10 += hits.exact!.slice(0, 10).filter((hit) => got10.has(hit.item)).length;
  });
  const loadAfter = load();
  console.log(`${table.name}: ${table.rows.toLocaleString('en')} × ${DIMENSIONS} ${table.precision} (${(simd.bytes / 2 ** 20).toFixed(0)} MiB of rows)`);
  console.log(`  js, every row           median ${ms(times.js, 50)} ms  p95 ${ms(times.js, 95)} ms  (load ${loadAfter})`);
  console.log(`  simd, every row         median ${ms(times.exact, 50)} ms  p95 ${ms(times.exact, 95)} ms  (load ${loadAfter})`);
  console.log(`  simd, sign prefilter    median ${ms(times.simd, 50)} ms  p95 ${ms(times.simd, 95)} ms  (load ${loadAfter})`);
  console.log(
    `  prefilter found ${((100 * found.top10) / (10 * queries.length)).toFixed(1)} % of the exact top 10 and ${((100 * found.top40) / (K * queries.length)).toFixed(1)} % of the top ${K}; ` +
      `js and simd every-row top ${K} differ in order in ${differing} of ${queries.length} searches`,
  );
}
