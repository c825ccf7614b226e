import { setTimeout as sleep } from 'node:timers/promises';
import type { DataSource, QueryRunner } from 'typeorm';
import type { Row, SqlDatabase, SqlSession, SqlValue } from '../sql/sql-session';

/**
 * Deadlock (1213), lock wait timeout (1205) and TiDB's write conflicts (9007, 8002, 8022):
 * the server gave up on the transaction, and running it again is expected to succeed.
 */
const RETRYABLE_ERRNOS = new Set([1213, 1205, 9007, 8002, 8022]);

export const MAX_TRANSACTION_ATTEMPTS = 5;

export function isRetryableTransactionError(error: unknown): boolean {
  return RETRYABLE_ERRNOS.has(errnoOf(error) ?? -1);
}

/** The server error number, on mysql2 errors and on TypeORM's QueryFailedError that wraps them. */
export function errnoOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const direct = (error as { errno?: unknown }).errno;
  if (typeof direct === 'number') return direct;
  const wrapped = (error as { driverError?: unknown }).driverError;
  return wrapped === error ? undefined : errnoOf(wrapped);
}

/** True when the server answered with an error (it carries an SQLSTATE), not the network. */
export function isServerError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  if (typeof (error as { sqlState?: unknown }).sqlState === 'string') return true;
  const wrapped = (error as { driverError?: unknown }).driverError;
  return wrapped !== undefined && wrapped !== error && isServerError(wrapped);
}

/** Exponential backoff with jitter, so colliding writers do not collide again in lockstep. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = 20 * 2 ** (attempt - 1);
  return Math.min(1000, Math.round(base + random() * base));
}

class QueryRunnerSession implements SqlSession {
  constructor(private readonly runner: QueryRunner) {}

  async rows(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    const result: unknown = await this.runner.query(sql, [...params]);
    return Array.isArray(result) ? (result as Row[]) : [];
  }

  async exec(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    const result = (await this.runner.query(sql, [...params], true)) as { affected?: number };
    return result.affected ?? 0;
  }

  async each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    const stream = (await this.runner.stream(sql, [...params])) as unknown as AsyncIterable<Row>;
    for await (const row of stream) onRow(row);
  }
}

/** SQL over the TypeORM pool: single statements, retried transactions, pinned connections. */
export class PooledSql implements SqlDatabase {
  constructor(private readonly dataSource: DataSource) {}

  rows(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.withConnection((session) => session.rows(sql, params));
  }

  exec(sql: string, params: readonly SqlValue[] = []): Promise<number> {
    return this.withConnection((session) => session.exec(sql, params));
  }

  each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    return this.withConnection((session) => session.each(sql, params, onRow));
  }

  /** Runs `work` on one connection of the pool, e.g. to hold a session-scoped lock. */
  async withConnection<T>(work: (session: SqlSession) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await work(new QueryRunnerSession(runner));
    } finally {
      await runner.release();
    }
  }

  /**
   * Runs `work` in one transaction and retries all of it when the server aborts it for a
   * deadlock or write conflict. READ COMMITTED, because writers recompute summaries after
   * locking the rows they touch: each statement must see what other writers committed while
   * this one waited for the lock, which a REPEATABLE READ snapshot taken earlier would hide.
   * `work` must have no effect outside the transaction, since it may run several times.
   */
  async transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const runner = this.dataSource.createQueryRunner();
      try {
        await runner.connect();
        await runner.startTransaction('READ COMMITTED');
        const result = await work(new QueryRunnerSession(runner));
        await runner.commitTransaction();
        return result;
      } catch (error) {
        if (runner.isTransactionActive) {
          // The error that aborted the transaction is the one worth reporting; a failed
          // rollback (e.g. on a dropped connection) leaves nothing committed either way.
          await runner.rollbackTransaction().catch(() => undefined);
        }
        if (attempt >= MAX_TRANSACTION_ATTEMPTS || !isRetryableTransactionError(error)) throw error;
      } finally {
        await runner.release();
      }
      await sleep(retryDelayMs(attempt));
    }
  }
}
