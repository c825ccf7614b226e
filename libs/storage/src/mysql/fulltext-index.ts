import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter } from '../records';
import { execWhereIn } from '../sql/sql-session';
import type { SqlSession, SqlValue } from '../sql/sql-session';
import { CURRENT_CHUNKS, batches, marks } from '../row-mappers';
import { BM25_B, BM25_K1, bm25Idf, porterDocumentTerms, porterQueryTerms } from '@trellis/text-search';
import type { DocumentTerms } from '@trellis/text-search';
import { indexedText } from '../sql/full-text';
import type { FullTextIndex } from '../sql/full-text';
import type { Scored } from '../sql/vector-ranking';

// Full-text search over our own inverted index (chunk_terms + chunks.fts_length +
// kb_text_stats), because self-hosted TiDB parses FULLTEXT and ignores it. Postings are written
// in the transaction that writes or deletes the chunk, so search never sees a half-indexed
// chunk. Terms are the standalone store's and ranking is Okapi BM25, both from
// @trellis/text-search (FTS5's porter unicode61 terms), computed by the server over the postings
// of the query's terms, so both engines rank alike.

/**
 * Chunks ranked first are fetched this many times over k: the postings of a replaced document
 * version stay until the new version is in, and the join drops them, so a search that loses
 * some is run again deeper.
 */
const DEEPER = 4;

/** Postings per INSERT: well under every server's packet limit. */
const POSTINGS_PER_STATEMENT = 500;

/**
 * Replaces the postings of these chunks and moves the knowledge base's totals by the
 * difference. `previousLengths` holds the indexed length of each chunk that existed before;
 * the caller has locked those chunk rows, so no concurrent writer counts them twice.
 */
export async function reindexChunkTexts(
  tx: SqlSession,
  scope: KbScope,
  texts: ReadonlyMap<string, DocumentTerms>,
  previousLengths: ReadonlyMap<string, number>,
): Promise<void> {
  await removePostings(tx, scope, [...texts.keys()]);
  const rows: SqlValue[][] = [];
  for (const [chunkId, terms] of texts) {
    for (const [term, tf] of terms.frequencies) rows.push([scope.tenantId, scope.kbId, term, chunkId, tf, terms.length]);
  }
  for (const batch of batches(rows, POSTINGS_PER_STATEMENT)) {
    await tx.exec(
      `INSERT INTO chunk_terms (tenant_id, kb_id, term, chunk_id, tf, fts_length) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
      batch.flat(),
    );
  }
  let lengthDelta = 0;
  for (const terms of texts.values()) lengthDelta += terms.length;
  for (const length of previousLengths.values()) lengthDelta -= length;
  await adjustTotals(tx, scope, texts.size - previousLengths.size, lengthDelta);
}

/** Drops the postings of deleted chunks; `removedLengths` are their indexed lengths. */
export async function unindexChunkTexts(tx: SqlSession, scope: KbScope, removedLengths: ReadonlyMap<string, number>): Promise<void> {
  if (removedLengths.size === 0) return;
  await removePostings(tx, scope, [...removedLengths.keys()]);
  let length = 0;
  for (const value of removedLengths.values()) length += value;
  await adjustTotals(tx, scope, -removedLengths.size, -length);
}

async function removePostings(tx: SqlSession, scope: KbScope, chunkIds: readonly string[]): Promise<void> {
  await execWhereIn(tx, (m) => `DELETE FROM chunk_terms WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${m})`, [scope.tenantId, scope.kbId], chunkIds);
}

/**
 * Moves the knowledge base's totals. Last write of its transaction on purpose: the row is shared
 * by every writer of the KB, so it is held for the shortest time. Clamped at zero so a drifted
 * total can never make BM25's average length negative.
 */
async function adjustTotals(tx: SqlSession, scope: KbScope, countDelta: number, lengthDelta: number): Promise<void> {
  if (countDelta === 0 && lengthDelta === 0) return;
  await tx.exec(
    `INSERT INTO kb_text_stats (tenant_id, kb_id, chunk_count, total_length) VALUES (?, ?, GREATEST(0, ?), GREATEST(0, ?))
     ON DUPLICATE KEY UPDATE chunk_count = GREATEST(0, chunk_count + ?), total_length = GREATEST(0, total_length + ?)`,
    [scope.tenantId, scope.kbId, countDelta, lengthDelta, countDelta, lengthDelta],
  );
}

/**
 * The k best current chunks for the query's terms by BM25, best first. Document frequencies
 * and the average length come from the knowledge base's own index, so one tenant's corpus
 * never shifts another's scores.
 */
export async function searchChunkTexts(
  session: SqlSession,
  scope: KbScope,
  query: string,
  k: number,
  filter?: ChunkFilter,
): Promise<Array<{ item: string; score: number }>> {
  const terms = porterQueryTerms(query);
  if (terms.size === 0 || k <= 0) return [];
  const [totals] = await session.rows('SELECT chunk_count, total_length FROM kb_text_stats WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
  const chunkCount = Number(totals?.chunk_count ?? 0);
  if (chunkCount <= 0) return [];
  const averageLength = Math.max(1, Number(totals?.total_length ?? 0) / chunkCount);

  const frequencyRows = await session.rows(
    `SELECT term, COUNT(*) AS df FROM chunk_terms WHERE tenant_id = ? AND kb_id = ? AND term IN (${marks([...terms.keys()])}) GROUP BY term`,
    [scope.tenantId, scope.kbId, ...terms.keys()],
  );
  // A term's weight in the score: its IDF, as many times as the query counts it.
  const weights = new Map<string, number>();
  const common = new Set<string>();
  for (const row of frequencyRows) {
    const term = String(row.term);
    const df = Number(row.df);
    weights.set(term, (terms.get(term) ?? 1) * bm25Idf(df, chunkCount));
    if (2 * df >= chunkCount) common.add(term);
  }
  if (weights.size === 0) return [];
  const ranking: Ranking = { scope, weights, averageLength, wanted: Math.floor(k) };
  const documentIds = filter?.documentIds ?? [];
  if (documentIds.length > 0) return rankedInDocuments(session, ranking, documentIds);
  // A term in half of the chunks or more weighs at most 2.2e-6 (bm25Idf): its postings, the
  // most of any term, are left unread unless the other terms find fewer than `wanted` chunks.
  const informative = [...weights.keys()].filter((term) => !common.has(term));
  if (informative.length > 0 && informative.length < weights.size) {
    const found = await rankedCurrent(session, { ...ranking, weights: new Map(informative.map((t) => [t, weights.get(t)!])) });
    if (found.length >= ranking.wanted) return found;
  }
  return rankedCurrent(session, ranking);
}

/** A search's BM25 over the postings of its terms: each term's weight, the average length, how many chunks it wants. */
interface Ranking {
  readonly scope: KbScope;
  readonly weights: ReadonlyMap<string, number>;
  readonly averageLength: number;
  readonly wanted: number;
}

/** BM25 summed over the postings `t` of the ranking's terms, in SQL, and the terms it binds first. */
function scoreSql(ranking: Ranking): { sql: string; terms: string[] } {
  const terms = [...ranking.weights.keys()];
  // Constants are inlined as DOUBLE literals: bound numbers would arrive as DECIMAL literals,
  // and DECIMAL division rounds to a few digits, which would blur close scores.
  const weightCase = `CASE t.term ${terms.map((term) => `WHEN ? THEN ${doubleLiteral(ranking.weights.get(term)!)}`).join(' ')} ELSE 0e0 END`;
  // tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen)), with the constant parts folded.
  const lengthNorm = `${doubleLiteral(BM25_K1 * (1 - BM25_B))} + ${doubleLiteral((BM25_K1 * BM25_B) / ranking.averageLength)} * t.fts_length`;
  return { sql: `SUM(${weightCase} * t.tf * ${doubleLiteral(BM25_K1 + 1)} / (t.tf + ${lengthNorm}))`, terms };
}

/** The best current chunks of a few documents: their postings are few, and joining each to its chunk first is cheap. */
async function rankedInDocuments(session: SqlSession, ranking: Ranking, documentIds: readonly string[]): Promise<Scored[]> {
  const { scope, wanted } = ranking;
  const { sql: score, terms: matched } = scoreSql(ranking);
  const rows = await session.rows(
    `SELECT t.chunk_id AS id, ${score} AS score
     FROM chunk_terms t JOIN ${CURRENT_CHUNKS} ON c.tenant_id = t.tenant_id AND c.kb_id = t.kb_id AND c.id = t.chunk_id
     WHERE t.tenant_id = ? AND t.kb_id = ? AND t.term IN (${marks(matched)}) AND c.document_id IN (${marks(documentIds)})
     GROUP BY t.chunk_id ORDER BY score DESC, t.chunk_id LIMIT ?`,
    [...matched, scope.tenantId, scope.kbId, ...matched, ...documentIds, wanted],
  );
  return rows.map((r) => ({ item: String(r.id), score: Number(r.score) }));
}

/** The `wanted` best current chunks, ranked on the postings alone, deeper while replaced versions take places. */
async function rankedCurrent(session: SqlSession, ranking: Ranking): Promise<Scored[]> {
  const { scope, wanted } = ranking;
  const { sql: score, terms: matched } = scoreSql(ranking);
  for (let limit = wanted; ; limit *= DEEPER) {
    // Ranked on the postings alone (they carry their chunk's length); only the `limit` best are
    // joined to chunks and documents. Joining every posting first was ~80 % of a search: 415 ms
    // against 73 ms for the 17k postings of a 10-term question at 10k chunks on MariaDB.
    const rows = await session.rows(
      `SELECT c.id AS id, r.score AS score
       FROM (SELECT t.chunk_id, ${score} AS score FROM chunk_terms t
             WHERE t.tenant_id = ? AND t.kb_id = ? AND t.term IN (${marks(matched)})
             GROUP BY t.chunk_id ORDER BY score DESC, t.chunk_id LIMIT ${limit}) r
       LEFT JOIN (${CURRENT_CHUNKS}) ON c.tenant_id = ? AND c.kb_id = ? AND c.id = r.chunk_id
       ORDER BY r.score DESC, r.chunk_id`,
      [...matched, scope.tenantId, scope.kbId, ...matched, scope.tenantId, scope.kbId],
    );
    const current = rows.filter((r) => r.id !== null).map((r) => ({ item: String(r.id), score: Number(r.score) }));
    // Enough current chunks, or fewer ranked than asked for: nothing deeper to find.
    if (current.length >= wanted || rows.length < limit) return current.slice(0, wanted);
  }
}

/**
 * Migration 24's data step: the postings, chunk lengths and totals of every chunk, from its text,
 * with the analysis search now uses (the statements before it emptied chunk_terms and
 * kb_text_stats). One knowledge base at a time, in pages of chunks by id; an interrupted run is
 * run again whole, as the migration is not recorded until it ends.
 */
export async function reanalyseChunkTexts(session: SqlSession, pageSize = 500): Promise<void> {
  for (const kb of await session.rows('SELECT tenant_id, id FROM knowledge_bases ORDER BY tenant_id, id')) {
    const scope = { tenantId: String(kb.tenant_id), kbId: String(kb.id) };
    for (let after = ''; ; ) {
      const page = await session.rows(`SELECT id, heading, text FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id > ? ORDER BY id LIMIT ${pageSize}`, [scope.tenantId, scope.kbId, after]);
      if (page.length === 0) break;
      const texts = new Map(page.map((r) => [String(r.id), porterDocumentTerms(indexedText(String(r.heading ?? ''), String(r.text)))]));
      await reindexChunkTexts(session, scope, texts, new Map());
      const lengths = [...texts].flatMap(([id, terms]) => [id, terms.length]);
      await session.exec(
        `UPDATE chunks SET fts_length = CASE id ${page.map(() => 'WHEN ? THEN ?').join(' ')} ELSE fts_length END WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks([...texts.keys()])})`,
        [...lengths, scope.tenantId, scope.kbId, ...texts.keys()],
      );
      if (page.length < pageSize) break;
      after = String(page.at(-1)!.id);
    }
  }
}

/** A finite number as a DOUBLE literal (exponent notation makes the server type it DOUBLE). */
export function doubleLiteral(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError('BM25 constant is not finite');
  return value.toExponential();
}

/** The MySQL family's full-text index: BM25 over chunk_terms, lengths in chunks.fts_length. */
export const invertedIndex: FullTextIndex = {
  analyze: (text) => ({ text, ...porterDocumentTerms(text) }),
  replace: reindexChunkTexts,
  remove: unindexChunkTexts,
  async removeKnowledgeBase(tx, scope) {
    for (const table of ['chunk_terms', 'kb_text_stats']) await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ?`, [scope.tenantId, scope.kbId]);
  },
  search: searchChunkTexts,
};
