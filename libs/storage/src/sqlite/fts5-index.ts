import type { KbScope } from '@trellis/contracts';
import { fullTextTerms } from '../query-terms';
import type { ChunkFilter } from '../records';
import { marks } from '../row-mappers';
import type { AnalyzedText, FullTextIndex } from '../sql/full-text';
import { execWhereIn } from '../sql/sql-session';
import type { SqlSession } from '../sql/sql-session';

const NO_TERMS: ReadonlyMap<string, number> = new Map();

async function deleteEntries(tx: SqlSession, chunkIds: readonly string[]): Promise<void> {
  await execWhereIn(tx, (m) => `DELETE FROM chunk_fts WHERE chunk_id IN (${m})`, [], chunkIds);
}

/** SQLite's FTS5 (porter stemming, BM25 ranking), one row per chunk. */
export const fts5Index: FullTextIndex = {
  analyze: (text: string): AnalyzedText => ({ text, length: 0, frequencies: NO_TERMS }),

  async replace(tx, _scope, texts) {
    await deleteEntries(tx, [...texts.keys()]);
    for (const [chunkId, t] of texts) await tx.exec('INSERT INTO chunk_fts (chunk_id, text) VALUES (?, ?)', [chunkId, t.text]);
  },

  remove: (tx, _scope, removedLengths) => deleteEntries(tx, [...removedLengths.keys()]),

  async removeKnowledgeBase(tx: SqlSession, scope: KbScope) {
    await tx.exec('DELETE FROM chunk_fts WHERE chunk_id IN (SELECT id FROM chunks WHERE tenant_id = ? AND kb_id = ?)', [scope.tenantId, scope.kbId]);
  },

  async search(session: SqlSession, scope: KbScope, query: string, k: number, filter?: ChunkFilter) {
    const terms = fullTextTerms(query);
    if (terms.length === 0 || k <= 0) return [];
    const documentIds = filter?.documentIds ?? [];
    const rows = await session.rows(
      `SELECT f.chunk_id AS id, bm25(chunk_fts) AS rank FROM chunk_fts f
       JOIN chunks c ON c.id = f.chunk_id JOIN documents d ON d.id = c.document_id AND d.version = c.version
       WHERE chunk_fts MATCH ? AND c.tenant_id = ? AND c.kb_id = ? ${documentIds.length > 0 ? `AND c.document_id IN (${marks(documentIds)})` : ''}
       ORDER BY rank LIMIT ${Math.floor(k)}`,
      [terms.map((t) => `"${t}"`).join(' OR '), scope.tenantId, scope.kbId, ...documentIds],
    );
    return rows.map((r) => ({ item: String(r.id), score: -Number(r.rank) }));
  },
};
