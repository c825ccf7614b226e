import { batches } from '../row-mappers';
import type { SqlSession } from '../sql/sql-session';
import { narrowed, nearestOf } from '../sql/vector-ranking';
import type { ByIdScope, Scored, VectorCandidates, VectorQuery, VectorRanking } from '../sql/vector-ranking';
import { BlobVectorCache } from './blob-vector-cache';
import type { VectorSql } from './vector-sql';

/**
 * The k candidates most similar to `query` by cosine, best first, ranked by the server (exact
 * scan, or the HNSW index where one exists).
 */
async function rankInServer(session: SqlSession, vectors: VectorSql, candidates: VectorCandidates, query: Float32Array, k: number): Promise<Scored[]> {
  if (k <= 0) return [];
  const statement = vectors.rankStatement(candidates, query, Math.floor(k));
  const rows = await session.rows(statement.sql, statement.params);
  // A zero vector has no cosine (the server answers NULL): similarity 0, as vector-math says.
  return rows.map((r) => ({ item: String(r.id), score: r.score === null ? 0 : Number(r.score) }));
}

/**
 * Ranking on the vector path the store is on: by the server where embeddings are VECTOR columns
 * (TiDB), else from the process's matrices, checked against the database before each use.
 */
export class MysqlVectorRanking implements VectorRanking {
  private readonly blobs = new BlobVectorCache();

  constructor(
    private readonly vectors: () => VectorSql,
    private readonly byIdScope: ByIdScope,
  ) {}

  async nearest(session: SqlSession, q: VectorQuery, query: Float32Array, k: number, groups?: ReadonlySet<string>): Promise<Scored[]> {
    const vectors = this.vectors();
    if (!vectors.scoresInDatabase) return nearestOf(session, q, this.byIdScope, await this.blobs.index(session, q), query, k, groups);
    const candidates = groups === undefined ? q.candidates : narrowed(q.candidates, [...groups], q.candidates.groupColumn);
    return rankInServer(session, vectors, candidates, query, k);
  }

  async similarities(session: SqlSession, q: VectorQuery, query: Float32Array, ids: readonly string[]): Promise<Map<string, number>> {
    const vectors = this.vectors();
    if (!vectors.scoresInDatabase) return (await this.blobs.index(session, q)).similarities(query, ids);
    const result = new Map<string, number>();
    for (const batch of batches([...new Set(ids)])) {
      for (const { item, score } of await rankInServer(session, vectors, narrowed(q.candidates, batch), query, batch.length)) result.set(item, score);
    }
    return result;
  }

  /** Other processes write too: the blob matrices are checked by fingerprint instead. */
  changed(): void {}
}
