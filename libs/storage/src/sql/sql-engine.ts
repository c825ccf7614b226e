import type { FullTextIndex } from './full-text';
import type { SqlDialect } from './sql-dialect';
import type { VectorRanking } from './vector-ranking';

/** What an engine brings to the shared store besides its session: its SQL, full text and vector ranking. */
export interface SqlEngine {
  readonly dialect: SqlDialect;
  readonly fullText: FullTextIndex;
  readonly vectors: VectorRanking;
}
