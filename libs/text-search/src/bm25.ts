/**
 * Okapi BM25 as both full-text indexes rank with it (SQLite's in memory, the MySQL family's in
 * SQL): the usual constants, and the IDF FTS5 ranked with before either index existed.
 */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Weight of a term found in `df` of `chunkCount` chunks: Robertson and Spärck Jones's IDF,
 * ln((N − n + 0.5) / (n + 0.5)), never below 1e-6, as FTS5 floors it. A term in half of the
 * chunks or more tells nothing and adds almost nothing to a score. Lucene's variant (ln of 1 +
 * the same ratio) gave such a term at least ln 2; hybrid's second hop searches the question plus
 * the names of its best passage, on a documentation corpus those names are in most chunks, and
 * with Lucene's IDF the chunks holding many of them climbed the ranking (docs/benchmarks.md,
 * session 17).
 */
export function bm25Idf(df: number, chunkCount: number): number {
  const idf = Math.log((chunkCount - df + 0.5) / (df + 0.5));
  return idf > 1e-6 ? idf : 1e-6;
}
