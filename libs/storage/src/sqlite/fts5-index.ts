import type { KbScope } from '@trellis/contracts';
import { fullTextTerms } from '../query-terms';
import type { ChunkFilter } from '../records';
import { marks } from '../row-mappers';
import type { AnalyzedText, FullTextIndex } from '../sql/full-text';
import { execWhereIn } from '../sql/sql-session';
import type { SqlSession } from '../sql/sql-session';
import type { Scored } from '../sql/vector-ranking';
import { Fts5CommonTerms } from './fts5-common-terms';

const NO_TERMS: ReadonlyMap<string, number> = new Map();

/**
 * The one token of a chunk's `kb` column: its tenant and knowledge base, hex-encoded so the
 * tokenizer keeps it whole ('z' is not a hex digit, so the pair cannot be read two ways). A
 * search matches it AND the query's terms, so FTS5 walks one knowledge base's postings only,
 * and can rank without a join to chunks (see `search`). SQL, so the migration that fills the
 * column for existing chunks, the writes and the searches all spell it the same way.
 */
export function kbTokenSql(tenantId: string, kbId: string): string {
  return `('k' || lower(hex(${tenantId})) || 'z' || lower(hex(${kbId})))`;
}

/** The FTS5 table: `chunk_id` is stored, not indexed; `text` is the chunk's; `kb` holds kbTokenSql. */
export const CHUNK_FTS_DDL = "CREATE VIRTUAL TABLE chunk_fts USING fts5 (chunk_id UNINDEXED, text, kb, tokenize = 'porter unicode61')";

/** bm25() weights per column (chunk_id, text, kb): the scope token matches every row, so it weighs nothing. */
const BM25 = 'bm25(chunk_fts, 0, 1, 0)';

/** `kb : "<token>" AND text : ("a" OR "b" ...)`, built by SQLite from the scope and the OR of the terms. */
const SCOPED_MATCH = `('kb : "' || ${kbTokenSql('?', '?')} || '" AND text : (' || ? || ')')`;

/**
 * Chunks FTS5 ranks first are fetched this many times over k: a chunk of a replaced document
 * version stays indexed until the new version is in, and is dropped by the join, so a search
 * that loses some is run again deeper.
 */
const DEEPER = 4;

async function deleteEntries(tx: SqlSession, chunkIds: readonly string[]): Promise<void> {
  await execWhereIn(tx, (m) => `DELETE FROM chunk_fts WHERE chunk_id IN (${m})`, [], chunkIds);
}

const orOf = (terms: readonly string[]) => terms.map((t) => `"${t}"`).join(' OR ');

/** Per session (a store's connection or its read threads): what its terms' counts are. */
const commonTerms = new WeakMap<SqlSession, Fts5CommonTerms>();

function commonTermsOf(session: SqlSession): Fts5CommonTerms {
  let terms = commonTerms.get(session);
  if (terms === undefined) {
    terms = new Fts5CommonTerms();
    commonTerms.set(session, terms);
  }
  return terms;
}

/**
 * The current chunks among the `wanted` best, matching only the terms in fewer than half of
 * the rows (Fts5CommonTerms). What only the common terms match scores at most 2.2e-6 a term,
 * below what a rarer term adds to a chunk in practice, so the top is the same unless the rarer
 * terms match fewer than `wanted` current chunks: then the search is run again with every term.
 */
async function rankedCurrent(session: SqlSession, scope: KbScope, terms: readonly string[], wanted: number): Promise<Scored[]> {
  const informative = await commonTermsOf(session).informative(session, terms);
  const found = await deepEnough(session, scope, informative, wanted);
  return found.length < wanted && informative.length < terms.length ? deepEnough(session, scope, terms, wanted) : found;
}

async function deepEnough(session: SqlSession, scope: KbScope, terms: readonly string[], wanted: number): Promise<Scored[]> {
  for (let limit = wanted; ; limit *= DEEPER) {
    const { current, seen } = await ranked(session, scope, terms, limit);
    // Enough current chunks, or fewer matches than asked for: nothing deeper to find.
    if (current.length >= wanted || seen < limit) return current.slice(0, wanted);
  }
}

/**
 * The current chunks among the `limit` that FTS5 ranks best, best first, and how many it
 * ranked. FTS5 ranks the scoped matches on its own index (bm25 per match, a sorter of `limit`
 * rows); only the rows it keeps are joined to chunks and documents. Joining every match first (chunk_id read from the FTS
 * content table, chunks and documents looked up by text id) cost ~13 µs a match: 70 ms for
 * the 4,000 matches of a 10-word question at 10k chunks, against ~4 ms to rank them.
 */
async function ranked(session: SqlSession, scope: KbScope, terms: readonly string[], limit: number): Promise<{ current: Scored[]; seen: number }> {
  const rows = await session.rows(
    `SELECT c.id AS id, r.score AS score
     FROM (SELECT rowid, ${BM25} AS score FROM chunk_fts WHERE chunk_fts MATCH ${SCOPED_MATCH} ORDER BY score LIMIT ${limit}) r
     JOIN chunk_fts f ON f.rowid = r.rowid
     LEFT JOIN chunks c ON c.id = f.chunk_id AND c.tenant_id = ? AND c.kb_id = ?
       AND EXISTS (SELECT 1 FROM documents d WHERE d.id = c.document_id AND d.version = c.version)
     ORDER BY r.score`,
    [scope.tenantId, scope.kbId, orOf(terms), scope.tenantId, scope.kbId],
  );
  return { current: rows.filter((r) => r.id !== null).map((r) => ({ item: String(r.id), score: -Number(r.score) })), seen: rows.length };
}

/** SQLite's FTS5 (porter stemming, BM25 ranking), one row per chunk, scoped by knowledge base. */
export const fts5Index: FullTextIndex = {
  analyze: (text: string): AnalyzedText => ({ text, length: 0, frequencies: NO_TERMS }),

  async replace(tx, scope, texts, previousLengths) {
    // Only chunks that existed have entries (every chunk delete removes its entries, see
    // removeChunks): new chunks skip the delete, which by chunk_id reads the whole FTS table.
    await deleteEntries(tx, [...texts.keys()].filter((id) => previousLengths.has(id)));
    for (const [chunkId, t] of texts) {
      await tx.exec(`INSERT INTO chunk_fts (chunk_id, text, kb) VALUES (?, ?, ${kbTokenSql('?', '?')})`, [chunkId, t.text, scope.tenantId, scope.kbId]);
    }
  },

  remove: (tx, _scope, removedLengths) => deleteEntries(tx, [...removedLengths.keys()]),

  async removeKnowledgeBase(tx: SqlSession, scope: KbScope) {
    await tx.exec('DELETE FROM chunk_fts WHERE chunk_id IN (SELECT id FROM chunks WHERE tenant_id = ? AND kb_id = ?)', [scope.tenantId, scope.kbId]);
  },

  async search(session: SqlSession, scope: KbScope, query: string, k: number, filter?: ChunkFilter) {
    const terms = fullTextTerms(query);
    const wanted = Math.floor(k);
    if (terms.length === 0 || wanted <= 0) return [];
    const documentIds = filter?.documentIds ?? [];
    if (documentIds.length > 0) {
      // A few documents: their matches are few, and ranking all of them after the join is cheap.
      const rows = await session.rows(
        `SELECT f.chunk_id AS id, ${BM25} AS rank FROM chunk_fts f
         JOIN chunks c ON c.id = f.chunk_id JOIN documents d ON d.id = c.document_id AND d.version = c.version
         WHERE chunk_fts MATCH ${SCOPED_MATCH} AND c.tenant_id = ? AND c.kb_id = ? AND c.document_id IN (${marks(documentIds)})
         ORDER BY rank LIMIT ${wanted}`,
        [scope.tenantId, scope.kbId, orOf(terms), scope.tenantId, scope.kbId, ...documentIds],
      );
      return rows.map((r) => ({ item: String(r.id), score: -Number(r.rank) }));
    }
    return rankedCurrent(session, scope, terms, wanted);
  },
};
