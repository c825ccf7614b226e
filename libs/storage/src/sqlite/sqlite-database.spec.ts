import Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDatabase } from './sqlite-database';

describe('SqliteDatabase', () => {
  let raw: Database.Database;
  let db: SqliteDatabase;

  beforeEach(() => {
    raw = new Database(':memory:');
    raw.exec('CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
    db = new SqliteDatabase(raw);
  });

  afterEach(() => raw.close());

  it('runs a statement issued during a transaction after it, never inside it', async () => {
    let outsideWrite: Promise<number> | undefined;
    let outsideRead: Promise<unknown[]> | undefined;
    const failed = db.transaction(async (tx) => {
      await tx.exec("INSERT INTO t (id, n) VALUES ('inside', 1)");
      outsideWrite = db.exec("INSERT INTO t (id, n) VALUES ('outside', 1)");
      outsideRead = db.rows('SELECT id FROM t ORDER BY id');
      await sleep(20);
      throw new Error('rolled back');
    });
    await expect(failed).rejects.toThrow('rolled back');
    expect(await outsideWrite).toBe(1);
    // The read saw neither the rolled-back row nor ran before the rollback.
    expect(await outsideRead).toEqual([{ id: 'outside' }]);
    expect(raw.prepare('SELECT id FROM t ORDER BY id').all()).toEqual([{ id: 'outside' }]);
  });

  it('serializes transactions that read, wait and write', async () => {
    await db.exec("INSERT INTO t (id, n) VALUES ('counter', 0)");
    const increment = () =>
      db.transaction(async (tx) => {
        const [row] = await tx.rows("SELECT n FROM t WHERE id = 'counter'");
        await sleep(5);
        await tx.exec("UPDATE t SET n = ? WHERE id = 'counter'", [Number(row!.n) + 1]);
      });
    await Promise.all(Array.from({ length: 5 }, increment));
    expect(await db.rows("SELECT n FROM t WHERE id = 'counter'")).toEqual([{ n: 5 }]);
  });

  it('rejects a failing statement instead of throwing at the caller', async () => {
    const result = db.exec('INSERT INTO missing VALUES (1)');
    await expect(result).rejects.toThrow(/no such table/);
  });
});
