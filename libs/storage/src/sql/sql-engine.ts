import type { KbScope } from '@trellis/contracts';
import type { FullTextIndex } from './full-text';
import type { SqlDialect } from './sql-dialect';
import type { SqlDatabase, SqlSession } from './sql-session';
import type { EmbeddingTable, VectorRanking } from './vector-ranking';

/** What an engine brings to the shared repositories besides its session: its SQL, full text and vector ranking. */
export interface SqlEngine {
  readonly dialect: SqlDialect;
  readonly fullText: FullTextIndex;
  readonly vectors: VectorRanking;
  /**
   * Where the graph walk's reads run (mentions and neighbourhoods of many entities, tens of
   * milliseconds at 100k chunks): the SQLite store's read threads, off the event loop and
   * beside a query's other reads. They see what was committed when each statement began, and
   * never wait for an open transaction. Absent: on the database's own connections.
   */
  readonly reads?: SqlSession;
}

/** What every repository is written over, on either engine: the database (for transactions) and the engine. */
export abstract class SqlRepository {
  constructor(
    protected readonly db: SqlDatabase,
    protected readonly engine: SqlEngine,
  ) {}

  protected get dialect(): SqlDialect {
    return this.engine.dialect;
  }

  /** The session for a walk's reads (SqlEngine.reads): never one inside a transaction. */
  protected get walkReads(): SqlSession {
    return this.engine.reads ?? this.db;
  }

  /** Runs a write of embedded rows; afterwards (committed or not) the per-process vector matrices of `tables` are stale. */
  protected async changing<T>(scope: KbScope, tables: readonly EmbeddingTable[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.engine.vectors.changed(scope.kbId, ...tables);
    }
  }
}
