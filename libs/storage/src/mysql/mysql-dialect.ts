import type { SqlDialect } from '../sql/sql-dialect';
import { errnoOf } from './mysql-session';
import { blobToVector, textToVector } from './vector-codec';
import type { VectorSql } from './vector-sql';

const ER_DUP_ENTRY = 1062;

/**
 * DATETIME(3) values travel as 'YYYY-MM-DD HH:MM:SS.mmm' in UTC (the pool uses dateStrings, so
 * neither the driver's nor the server's time zone shifts them); the API speaks ISO-8601.
 */
export function toSqlTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}

/**
 * The MySQL family's pieces of the shared statements (TiDB, MariaDB, MySQL). Embeddings follow
 * the store's vector path (`vectors()`), which is settled from the schema after connecting.
 */
export function mysqlDialect(vectors: () => VectorSql): SqlDialect {
  return {
    onConflictUpdate: (assignments) => `ON DUPLICATE KEY UPDATE ${assignments}`,
    inserted: (column) => `VALUES(${column})`,
    onConflictKeep: (column) => `ON DUPLICATE KEY UPDATE ${column} = ${column}`,
    insertIgnore: 'INSERT IGNORE',
    locksRows: true,
    forUpdate: ' FOR UPDATE',
    least: (a, b) => `LEAST(${a}, ${b})`,
    greatest: (a, b) => `GREATEST(${a}, ${b})`,
    time: toSqlTime,
    indexedBy: () => '',
    byIdScope: (alias) => `${alias ? `${alias}.` : ''}tenant_id = ? AND ${alias ? `${alias}.` : ''}kb_id = ?`,
    joinedIds: null,
    isDuplicateKey: (error) => errnoOf(error) === ER_DUP_ENTRY,
    embeddingValue: (vector) => vectors().embeddingValue(vector),
    readEmbedding: (value) => {
      if (value === null || value === undefined) return null;
      return vectors().storage === 'tidb-vector' ? textToVector(String(value)) : blobToVector(value);
    },
  };
}
