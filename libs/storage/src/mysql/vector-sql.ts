import type { SqlValue, Statement } from '../sql/sql-session';
import { vectorToBuffer } from '@trellis/vectors';
import { vectorToText } from './vector-codec';
import type { EmbeddingTable, VectorCandidates } from '../sql/vector-ranking';

export type { EmbeddingTable, VectorCandidates } from '../sql/vector-ranking';

/**
 * Everything SQL that differs between the two ways this adapter keeps embeddings, in one place
 * so the TiDB statements can be unit-tested on machines (and CI) that only have MariaDB.
 *
 * - 'tidb-vector': VECTOR columns without a fixed dimension (knowledge bases with different
 *   embedding models share a table), ranked by the server with VEC_COSINE_DISTANCE.
 * - 'blob': float32 little-endian BLOBs, streamed to the service and ranked there.
 */
export type VectorStorage = 'tidb-vector' | 'blob';

export const EMBEDDING_TABLES: readonly EmbeddingTable[] = ['chunks', 'entities', 'relationships'];

/** Succeeds only on servers with TiDB's vector functions; how the adapter picks its path. */
export const VECTOR_SUPPORT_PROBE = "SELECT VEC_COSINE_DISTANCE('[1,0]', '[0,1]') AS distance";

export interface VectorSql {
  readonly storage: VectorStorage;
  /** Column type of every embedding column. */
  readonly embeddingColumnType: string;
  /**
   * True when `rankStatement` rows carry `score` (computed by the server); false when they carry
   * `embedding` bytes for the service to score.
   */
  readonly scoresInDatabase: boolean;
  /** The value bound when writing an embedding. */
  embeddingValue(vector: Float32Array): SqlValue;
  /** Ranks the candidates against `query`; see `scoresInDatabase` for what the rows hold. */
  rankStatement(candidates: VectorCandidates, query: Float32Array, k: number): Statement;
  /** DDL of the ANN index for a table, or null where the path has none. */
  vectorIndexDdl(table: EmbeddingTable): string | null;
}

export function vectorIndexName(table: EmbeddingTable): string {
  return `${table}_embedding_hnsw`;
}

export const tidbVectorSql: VectorSql = {
  storage: 'tidb-vector',
  // No dimension: VECTOR(n) would force one embedding model on every knowledge base.
  embeddingColumnType: 'VECTOR',
  scoresInDatabase: true,
  // An empty vector has no direction; NULL keeps it out of every ranking.
  embeddingValue: (vector) => (vector.length === 0 ? null : vectorToText(vector)),
  rankStatement(c, query, k) {
    const literal = vectorToText(query);
    // VEC_DIMS keeps rows of another embedding model out: TiDB refuses to compare vectors of
    // different lengths, and such rows are not comparable anyway.
    return {
      sql:
        `SELECT ${c.idColumn} AS id, 1 - VEC_COSINE_DISTANCE(${c.embeddingColumn}, ?) AS score FROM ${c.from} ` +
        `WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL AND VEC_DIMS(${c.embeddingColumn}) = ? ` +
        `ORDER BY VEC_COSINE_DISTANCE(${c.embeddingColumn}, ?) LIMIT ?`,
      params: [literal, ...c.params, query.length, literal, k],
    };
  },
  vectorIndexDdl: (table) =>
    `ALTER TABLE ${table} ADD VECTOR INDEX ${vectorIndexName(table)} ((VEC_COSINE_DISTANCE(embedding))) USING HNSW`,
};

export const blobVectorSql: VectorSql = {
  storage: 'blob',
  // MEDIUMBLOB: BLOB's 64 KiB would cap embeddings just below 16384 dimensions.
  embeddingColumnType: 'MEDIUMBLOB',
  scoresInDatabase: false,
  // Zero-length bytes, not NULL, so an empty embedding scores 0 exactly as in SQLite.
  embeddingValue: (vector) => vectorToBuffer(vector),
  rankStatement: (c) => ({
    sql: `SELECT ${c.idColumn} AS id, ${c.embeddingColumn} AS embedding FROM ${c.from} WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL`,
    params: [...c.params],
  }),
  vectorIndexDdl: () => null,
};

export function vectorSqlFor(storage: VectorStorage): VectorSql {
  switch (storage) {
    case 'tidb-vector':
      return tidbVectorSql;
    case 'blob':
      return blobVectorSql;
  }
}
