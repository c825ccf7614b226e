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

const touchesGraph = (tables: readonly EmbeddingTable[]) => tables.includes('entities') || tables.includes('relationships');

/** What every repository is written over, on either engine: the database (for transactions) and the engine. */
export abstract class SqlRepository {
  constructor(
    protected readonly db: SqlDatabase,
    protected readonly engine: SqlEngine,
  ) {}

  protected get dialect(): SqlDialect {
    return this.engine.dialect;
  }

  /**
   * Runs a write of embedded rows; afterwards (committed or not) the per-process indexes of
   * `tables` are stale. `graph` says whether it may change the graph's structure (names, mention
   * counts, relationship ends and weights, mentions): any write to entities or relationships
   * unless said otherwise.
   */
  protected async changing<T>(scope: KbScope, tables: readonly EmbeddingTable[], write: () => Promise<T>, graph = touchesGraph(tables)): Promise<T> {
    try {
      return await write();
    } finally {
      this.changed(scope, tables, graph);
    }
  }

  /** Marks the per-process indexes of `tables` stale: the vector matrices, the full text of chunks, and with `graph` the graph in memory. */
  protected changed(scope: KbScope, tables: readonly EmbeddingTable[], graph = touchesGraph(tables)): void {
    this.engine.vectors.changed(scope.kbId, ...tables);
    if (tables.includes('chunks')) this.engine.fullText.changed?.(scope.kbId);
    if (graph) this.engine.adjacency?.changed(scope.kbId);
  }
}
