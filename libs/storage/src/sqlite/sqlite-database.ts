import type Database from 'better-sqlite3';
import type { Row, SqlDatabase, SqlSession, SqlValue } from '../sql/sql-session';

/** Prepared statements kept per connection; past this many distinct texts the cache starts over. */
const MAX_CACHED_STATEMENTS = 2000;

/**
 * better-sqlite3 behind the async session port. Its calls are synchronous, so a statement runs to
 * completion the moment it is issued; a transaction, though, spans several awaits of the shared
 * code, and on the one connection everything issued meanwhile would land inside it. So
 * transactions are serialized: while one is open, every other statement and transaction waits
 * for it to end, and statements outside a transaction run at once otherwise.
 */
export class SqliteDatabase implements SqlDatabase {
  private readonly statements = new Map<string, Database.Statement>();
  /** Settles when the last queued transaction has ended. */
  private tail: Promise<unknown> = Promise.resolve();
  /** True while a transaction, or a statement queued behind one, has the connection. */
  private held = false;
  private readonly tx: SqlSession = {
    rows: (sql, params = []) => settle(() => this.runRows(sql, params)),
    exec: (sql, params = []) => settle(() => this.runExec(sql, params)),
    each: (sql, params, onRow) => settle(() => this.runEach(sql, params, onRow)),
  };

  constructor(private readonly db: Database.Database) {}

  rows(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.outside(() => this.runRows(sql, params));
  }

  exec(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.outside(() => this.runExec(sql, params));
  }

  each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    return this.outside(() => this.runEach(sql, params, onRow));
  }

  /** IMMEDIATE: the write lock is taken up front, so another process's writer waits (busy_timeout) instead of failing mid-way. */
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.queue(async () => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const result = await work(this.tx);
        this.db.exec('COMMIT');
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw error;
      }
    });
  }

  /** Runs a statement now, or after the open transaction (and whatever queued before it) ends. */
  private outside<T>(work: () => T): Promise<T> {
    return this.held ? this.queue(async () => work()) : settle(work);
  }

  private queue<T>(job: () => Promise<T>): Promise<T> {
    const run = this.tail.then(async () => {
      this.held = true;
      try {
        return await job();
      } finally {
        this.held = false;
      }
    });
    this.tail = run.catch(() => undefined);
    return run;
  }

  private prepare(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      if (this.statements.size >= MAX_CACHED_STATEMENTS) this.statements.clear();
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private runRows(sql: string, params: readonly SqlValue[]): Row[] {
    const statement = this.prepare(sql);
    if (statement.reader) return statement.all(...params) as Row[];
    statement.run(...params);
    return [];
  }

  private runExec(sql: string, params: readonly SqlValue[]): number {
    const statement = this.prepare(sql);
    if (!statement.reader) return statement.run(...params).changes;
    statement.all(...params);
    return 0;
  }

  private runEach(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): void {
    for (const row of this.prepare(sql).iterate(...params)) onRow(row as Row);
  }
}

/** A synchronous call as a promise: its error rejects instead of throwing at the caller. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}
