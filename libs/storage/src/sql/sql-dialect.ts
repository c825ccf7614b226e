import type { SqlValue } from './sql-session';

/**
 * What differs between the SQL of the two engines, and nothing else: the store's statements are
 * written once and ask the dialect for these pieces. MySQL-family text (TiDB, MariaDB) comes
 * from mysql/mysql-dialect.ts, SQLite text from sqlite/sqlite-dialect.ts.
 */
export interface SqlDialect {
  /** Appended to an INSERT: a row that conflicts on any unique key is updated by `assignments`. */
  onConflictUpdate(assignments: string): string;
  /** Inside `onConflictUpdate`'s assignments: the value the INSERT carried for `column`. */
  inserted(column: string): string;
  /**
   * Appended to an INSERT: a conflicting row is kept as it is. On the MySQL family it is also
   * locked exclusively (a no-op update of `column`), which the graph writes rely on.
   */
  onConflictKeep(column: string): string;
  /** An INSERT that skips rows conflicting on a unique key: `INSERT IGNORE` / `INSERT OR IGNORE`. */
  readonly insertIgnore: string;
  /**
   * True where concurrent transactions run at once and rows must be locked before they are
   * changed (MySQL family); false where the engine runs one transaction at a time (SQLite).
   */
  readonly locksRows: boolean;
  /** Appended to a SELECT of rows the transaction will change: ` FOR UPDATE`, or nothing. */
  readonly forUpdate: string;
  /** The smaller (larger) of two SQL expressions. */
  least(a: string, b: string): string;
  greatest(a: string, b: string): string;
  /** A time as the engine stores it, from ISO-8601 (the row mappers read both forms back). */
  time(iso: string): string;
  /**
   * The tenant and knowledge-base conditions of a lookup by primary key (two parameters);
   * `alias` qualifies the columns. SQLite must not be tempted to use a per-KB index instead.
   */
  byIdScope(alias?: string): string;
  /** After a table name: read it through this index, where the engine has it (SQLite's INDEXED BY); elsewhere nothing. */
  indexedBy(index: string): string;
  /** True when `error` reports a duplicate key. */
  isDuplicateKey(error: unknown): boolean;
  /**
   * An aggregate of a group's ids (`column`) as one text, space-separated and in order: one row
   * per group instead of one per id, where making rows is what a read of thousands costs (SQLite,
   * in process). Null where such a text is capped (the MySQL family's group_concat_max_len) and
   * the rows are read instead.
   */
  readonly joinedIds: ((column: string) => string) | null;
  /** The value bound when writing an embedding. */
  embeddingValue(vector: Float32Array): SqlValue;
  /** An embedding as read back; null for NULL. */
  readEmbedding(value: unknown): Float32Array | null;
}

/** `a = <inserted a>, b = <inserted b>`: an upsert that takes these columns from the new row. */
export function takeInserted(dialect: SqlDialect, columns: readonly string[]): string {
  return columns.map((c) => `${c} = ${dialect.inserted(c)}`).join(', ');
}
