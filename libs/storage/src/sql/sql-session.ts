import type { Row } from '../row-mappers';

export type { Row } from '../row-mappers';

/** What the store binds into statements: both drivers take these as they are. */
export type SqlValue = string | number | null | Buffer;

export interface Statement {
  sql: string;
  params: readonly SqlValue[];
}

/**
 * The SQL surface every shared part of the store is written against, inside or outside a
 * transaction. Both engines implement it: the MySQL family over TypeORM's pool (mysql2), SQLite
 * over better-sqlite3 (synchronous, wrapped and serialized).
 */
export interface SqlSession {
  rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]>;
  /** Runs a write; resolves to the number of affected rows. */
  exec(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /** Streams the result to `onRow`, so a large scan never sits in memory at once. */
  each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void>;
}

/** A session that can also open transactions: the database itself. */
export interface SqlDatabase extends SqlSession {
  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws.
   * `work` must use only `tx`, and must have no effect outside the transaction, since an engine
   * may run it again after a deadlock or write conflict.
   */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T>;
}
