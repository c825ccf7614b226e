import type { SqlSession } from '../sql/sql-session';
import { ensureVectorIndexes, missingVectorIndexes, schemaVectorStorage } from './mysql-capabilities';
import type { ServerCapabilities } from './mysql-capabilities';
import { vectorSqlFor } from './vector-sql';
import type { EmbeddingTable, VectorSql } from './vector-sql';
import type { StoreLogger } from './store-logger';

/**
 * Which vector path a store is on, and the logs that say so. Before the first migration the
 * server decides (VECTOR where it has VEC_COSINE_DISTANCE); afterwards the schema does, since
 * its columns are what they are (a database migrated before the server gained VECTOR keeps
 * BLOBs).
 */
export class VectorPath {
  private current: VectorSql;
  private pathLogged = false;
  private settled = false;
  private exactSearchReported = false;
  private exactSearchCauseReported = false;

  constructor(
    private readonly server: ServerCapabilities,
    private readonly database: string,
    private readonly logger: StoreLogger,
  ) {
    this.current = vectorSqlFor(server.vectorFunctions ? 'tidb-vector' : 'blob');
  }

  get sql(): VectorSql {
    return this.current;
  }

  /** Reads the path from the schema (if there is one yet) and logs it the first time. */
  async settle(session: SqlSession): Promise<void> {
    const wasSettled = this.settled;
    this.settled = true;
    const fromSchema = await schemaVectorStorage(session);
    const storage = fromSchema ?? (this.server.vectorFunctions ? 'tidb-vector' : 'blob');
    const changed = storage !== this.current.storage;
    this.current = vectorSqlFor(storage);
    if (changed || !this.pathLogged) {
      this.pathLogged = true;
      this.logger.info(
        { database: this.database, vectorStorage: storage, serverVectorFunctions: this.server.vectorFunctions, server: this.server.version },
        storage === 'tidb-vector'
          ? 'vectors in VECTOR columns, ranked by the server with VEC_COSINE_DISTANCE'
          : this.server.vectorFunctions
            ? 'vectors in float32 BLOBs ranked in the service: the schema was created without VECTOR columns'
            : 'vectors in float32 BLOBs ranked in the service: the server has no VEC_COSINE_DISTANCE',
      );
    }
    // At connect only: after a migration ensureIndexes() reports, with the reason the build failed.
    if (fromSchema === 'tidb-vector' && !wasSettled) {
      const missing = await missingVectorIndexes(session, this.current);
      if (missing.length > 0) this.reportExactSearch(missing, []);
    }
  }

  /** After a migration: builds the HNSW indexes the cluster accepts, reports exact search otherwise. */
  async ensureIndexes(session: SqlSession): Promise<void> {
    const state = await ensureVectorIndexes(session, this.current);
    if (state.missing.length > 0) this.reportExactSearch(state.missing, state.failures);
  }

  /**
   * Once per store (the condition lasts until an operator adds TiFlash and migrates again), and
   * once more when a failed index build says why, since that is what the operator needs to see.
   */
  private reportExactSearch(tables: readonly EmbeddingTable[], failures: readonly string[]): void {
    const withCause = failures.length > 0;
    if (withCause ? this.exactSearchCauseReported : this.exactSearchReported) return;
    this.exactSearchReported = true;
    this.exactSearchCauseReported ||= withCause;
    this.logger.warn({ database: this.database, tables, failures }, 'no HNSW vector index (ERROR 8200 without TiFlash): exact vector search is used');
  }
}
