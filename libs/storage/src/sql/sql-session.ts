import { batches, marks } from '../row-mappers';
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

/**
 * Runs `sql(marks)` once per batch of `ids` (bound after `params`, into the `IN (...)` that
 * `marks` fills) and concatenates the rows: no statement grows unbounded with its id list.
 */
export async function rowsWhereIn(session: SqlSession, sql: (marks: string) => string, params: readonly SqlValue[], ids: readonly string[]): Promise<Row[]> {
  const out: Row[] = [];
  for (const batch of batches(ids)) out.push(...(await session.rows(sql(marks(batch)), [...params, ...batch])));
  return out;
}

/** The write counterpart of rowsWhereIn; resolves to the rows affected. */
export async function execWhereIn(session: SqlSession, sql: (marks: string) => string, params: readonly SqlValue[], ids: readonly string[]): Promise<number> {
  let affected = 0;
  for (const batch of batches(ids)) affected += await session.exec(sql(marks(batch)), [...params, ...batch]);
  return affected;
}

/** Rows grouped by their `owner` column, each group in row order. */
export function groupByOwner(rows: readonly Row[]): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const owner = String(row.owner);
    const group = groups.get(owner);
    if (group === undefined) groups.set(owner, [row]);
    else group.push(row);
  }
  return groups;
}
