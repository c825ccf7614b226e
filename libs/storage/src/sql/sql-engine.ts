import type { KbScope } from '@trellis/contracts';
import type { FullTextIndex } from './full-text';
import type { GraphAdjacencies } from './graph-adjacency';
import type { SqlDialect } from './sql-dialect';
import type { SqlDatabase } from './sql-session';
import type { EmbeddingTable, VectorRanking } from './vector-ranking';

/** What an engine brings to the shared repositories besides its session: its SQL, full text and vector ranking. */
export interface SqlEngine {
  readonly dialect: SqlDialect;
  readonly fullText: FullTextIndex;
  readonly vectors: VectorRanking;
  /** Graphs held in memory, where the engine keeps them: the walks' reads answered without SQL. */
  readonly adjacency?: GraphAdjacencies;
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

  /** Runs a write of embedded rows; afterwards (committed or not) the per-process indexes of `tables` are stale. */
  protected async changing<T>(scope: KbScope, tables: readonly EmbeddingTable[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.changed(scope, tables);
    }
  }

  /** Marks the per-process indexes of `tables` stale: the vector matrices, the full text of chunks, the graph in memory. */
  protected changed(scope: KbScope, tables: readonly EmbeddingTable[]): void {
    this.engine.vectors.changed(scope.kbId, ...tables);
    if (tables.includes('chunks')) this.engine.fullText.changed?.(scope.kbId);
    if (tables.includes('entities') || tables.includes('relationships')) this.engine.adjacency?.changed(scope.kbId);
  }
}
