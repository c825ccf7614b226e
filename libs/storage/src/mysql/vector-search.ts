import { TopK, cosineSimilarity } from '../vector-math';
import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter } from '../records';
import type { SqlSession } from '../sql/sql-session';
import { CURRENT_CHUNKS, marks } from './mysql-rows';
import { blobToVector } from './vector-codec';
import type { VectorCandidates, VectorSql } from './vector-sql';

/**
 * The k candidates most similar to `query` by cosine, best first. On TiDB the server ranks
 * (exact scan, or the HNSW index where one exists); on the blob path the rows are streamed and
 * ranked here with a bounded heap, so memory stays O(k) whatever the table size.
 */
export async function rankByVector(
  session: SqlSession,
  vectors: VectorSql,
  candidates: VectorCandidates,
  query: Float32Array,
  k: number,
): Promise<Array<{ item: string; score: number }>> {
  if (k <= 0) return [];
  const statement = vectors.rankStatement(candidates, query, Math.floor(k));
  if (vectors.scoresInDatabase) {
    const rows = await session.rows(statement.sql, statement.params);
    // A zero vector has no cosine (the server answers NULL): similarity 0, as vector-math says.
    return rows.map((r) => ({ item: String(r.id), score: r.score === null ? 0 : Number(r.score) }));
  }
  const top = new TopK<string>(Math.floor(k));
  await session.each(statement.sql, statement.params, (row) => top.offer(String(row.id), cosineSimilarity(query, blobToVector(row.embedding))));
  return top.result();
}

/** Current chunks of the knowledge base, optionally of some documents only. */
export function currentChunkCandidates(scope: KbScope, filter?: ChunkFilter): VectorCandidates {
  const documentIds = filter?.documentIds ?? [];
  return {
    from: CURRENT_CHUNKS,
    where: `c.tenant_id = ? AND c.kb_id = ?${documentIds.length > 0 ? ` AND c.document_id IN (${marks(documentIds)})` : ''}`,
    params: [scope.tenantId, scope.kbId, ...documentIds],
    idColumn: 'c.id',
    embeddingColumn: 'c.embedding',
  };
}

/** Entities or relationships of the knowledge base, optionally only those with these ids. */
export function graphCandidates(table: 'entities' | 'relationships', scope: KbScope, ids?: readonly string[]): VectorCandidates {
  const alias = table === 'entities' ? 'e' : 'r';
  const idClause = ids === undefined ? '' : ` AND ${alias}.id IN (${marks(ids)})`;
  return {
    from: `${table} ${alias}`,
    where: `${alias}.tenant_id = ? AND ${alias}.kb_id = ?${idClause}`,
    params: [scope.tenantId, scope.kbId, ...(ids ?? [])],
    idColumn: `${alias}.id`,
    embeddingColumn: `${alias}.embedding`,
    // Summaries are re-embedded under the same id: their hash and pending flag say when.
    fingerprintColumn: `CONCAT(${alias}.id, ${alias}.summary_hash, ${alias}.summary_pending)`,
  };
}
