import { isServerError } from './mysql-session';
import type { SqlSession } from '../sql/sql-session';
import { EMBEDDING_TABLES, VECTOR_SUPPORT_PROBE, vectorIndexName } from './vector-sql';
import type { EmbeddingTable, VectorSql, VectorStorage } from './vector-sql';

/** What the server offers, probed once at connect. */
export interface ServerCapabilities {
  version: string;
  /** TiDB's VECTOR type and VEC_* functions. */
  vectorFunctions: boolean;
  /** Binary utf8mb4 collation for new tables: no-pad where available, so 'a' <> 'a '. */
  collation: string;
}

const BINARY_COLLATIONS = ['utf8mb4_0900_bin', 'utf8mb4_nopad_bin', 'utf8mb4_bin'] as const;

export async function probeServer(session: SqlSession): Promise<ServerCapabilities> {
  const [versionRow] = await session.rows('SELECT VERSION() AS version');
  const available = new Set(
    (await session.rows(`SELECT COLLATION_NAME AS name FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (?, ?, ?)`, [...BINARY_COLLATIONS])).map(
      (r) => String(r.name),
    ),
  );
  let vectorFunctions = true;
  try {
    await session.rows(VECTOR_SUPPORT_PROBE);
  } catch (error) {
    // MariaDB and MySQL answer ERROR 1305 "FUNCTION does not exist": the answer probed for. An
    // error the server did not send (a dropped connection) must not pass for "no vectors", or
    // a TiDB database would be created with BLOB columns for good.
    if (!isServerError(error)) throw error;
    vectorFunctions = false;
  }
  return {
    version: String(versionRow?.version ?? ''),
    vectorFunctions,
    collation: BINARY_COLLATIONS.find((c) => available.has(c)) ?? 'utf8mb4_bin',
  };
}

/**
 * How an existing schema keeps embeddings, or null before the first migration. The schema,
 * not the server, decides: a database migrated before the server gained VECTOR keeps BLOBs.
 */
export async function schemaVectorStorage(session: SqlSession): Promise<VectorStorage | null> {
  const [row] = await session.rows(
    `SELECT DATA_TYPE AS type FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'chunks' AND COLUMN_NAME = 'embedding'`,
  );
  if (row === undefined) return null;
  return /vector/i.test(String(row.type)) ? 'tidb-vector' : 'blob';
}

/** Embedding tables without their ANN index, and why the last attempt to build one failed. */
export interface VectorIndexState {
  missing: EmbeddingTable[];
  failures: string[];
}

/** Embedding tables still without their HNSW index; none on the blob path, which has no index. */
export async function missingVectorIndexes(session: SqlSession, vectors: VectorSql): Promise<EmbeddingTable[]> {
  if (vectors.vectorIndexDdl('chunks') === null) return [];
  const rows = await session.rows(
    `SELECT DISTINCT INDEX_NAME AS name FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND INDEX_NAME IN (?, ?, ?)`,
    EMBEDDING_TABLES.map(vectorIndexName),
  );
  const present = new Set(rows.map((r) => String(r.name)));
  return EMBEDDING_TABLES.filter((t) => !present.has(vectorIndexName(t)));
}

/**
 * Tries to build the HNSW index of each embedding table that lacks one. Clusters without
 * TiFlash refuse (ERROR 8200), and so may a VECTOR column without a fixed dimension; searches
 * then scan exactly, which is correct, only slower. Re-run by every migrate(), so a cluster
 * that gains TiFlash gets its indexes.
 */
export async function ensureVectorIndexes(session: SqlSession, vectors: VectorSql): Promise<VectorIndexState> {
  const failures: string[] = [];
  for (const table of await missingVectorIndexes(session, vectors)) {
    const ddl = vectors.vectorIndexDdl(table);
    if (ddl === null) continue;
    try {
      await session.exec(ddl);
    } catch (error) {
      failures.push(`${table}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { missing: await missingVectorIndexes(session, vectors), failures };
}
