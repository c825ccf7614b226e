import { describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { MAX_TRANSACTION_ATTEMPTS, PooledSql, errnoOf, isRetryableTransactionError, isServerError, retryDelayMs } from './mysql-session';

/** A pool whose transactions fail with the given errnos, in order, then succeed. */
function fakePool(failures: number[]) {
  const log: string[] = [];
  const dataSource = {
    createQueryRunner: () => {
      const runner = {
        isTransactionActive: false,
        connect: async () => undefined,
        startTransaction: async (level: string) => {
          log.push(`start ${level}`);
          runner.isTransactionActive = true;
        },
        query: async () => {
          const errno = failures.shift();
          // TypeORM wraps driver errors; the errno travels on driverError.
          if (errno !== undefined) throw Object.assign(new Error(`errno ${errno}`), { driverError: { errno } });
          return [];
        },
        commitTransaction: async () => {
          log.push('commit');
          runner.isTransactionActive = false;
        },
        rollbackTransaction: async () => {
          log.push('rollback');
          runner.isTransactionActive = false;
        },
        release: async () => {
          log.push('release');
        },
      };
      return runner;
    },
  };
  return { sql: new PooledSql(dataSource as unknown as DataSource), log };
}

describe('transactions', () => {
  it('knows which server errors mean "run it again"', () => {
    for (const errno of [1213, 1205, 9007, 8002, 8022]) expect(isRetryableTransactionError({ errno })).toBe(true);
    for (const errno of [1062, 1146, 8200]) expect(isRetryableTransactionError({ errno })).toBe(false);
    expect(errnoOf({ driverError: { errno: 1213 } })).toBe(1213);
    expect(isRetryableTransactionError(new Error('plain'))).toBe(false);
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(retryDelayMs(1, () => 0)).toBe(20);
    expect(retryDelayMs(3, () => 0.5)).toBe(120);
    expect(retryDelayMs(20, () => 1)).toBe(1000);
  });

  it('retries the whole transaction on a deadlock and commits once', async () => {
    const { sql, log } = fakePool([1213, 9007]);
    const result = await sql.transaction(async (tx) => {
      await tx.rows('SELECT 1');
      return 'done';
    });
    expect(result).toBe('done');
    expect(log.filter((l) => l === 'rollback')).toHaveLength(2);
    expect(log.filter((l) => l === 'commit')).toHaveLength(1);
    expect(log.filter((l) => l === 'release')).toHaveLength(3);
    expect(log[0]).toBe('start READ COMMITTED');
  });

  it(`gives up after ${MAX_TRANSACTION_ATTEMPTS} attempts, and at once on other errors`, async () => {
    const busy = fakePool(Array.from({ length: 10 }, () => 1205));
    await expect(busy.sql.transaction((tx) => tx.rows('SELECT 1'))).rejects.toThrow('errno 1205');
    expect(busy.log.filter((l) => l.startsWith('start'))).toHaveLength(MAX_TRANSACTION_ATTEMPTS);

    const broken = fakePool([1146]);
    await expect(broken.sql.transaction((tx) => tx.rows('SELECT 1'))).rejects.toThrow('errno 1146');
    expect(broken.log.filter((l) => l.startsWith('start'))).toHaveLength(1);
  });
});

describe('server errors', () => {
  it('tells an error the server sent from one the network caused', () => {
    expect(isServerError({ errno: 1305, sqlState: '42000' })).toBe(true);
    expect(isServerError({ driverError: { errno: 1305, sqlState: '42000' } })).toBe(true);
    expect(isServerError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', errno: -111 }))).toBe(false);
  });
});
