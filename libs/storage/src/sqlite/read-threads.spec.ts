import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { MATRIX_SLICE_ROWS, matrixRowsOf } from '../sql/vector-ranking';
import type { MatrixSink } from '../sql/vector-ranking';
import { stampDigest } from '@trellis/vectors';
import type { RowSlice } from '@trellis/vectors';
import { SqliteDatabase } from './sqlite-database';
import { SqliteReadThreads } from './read-threads';

/** A session that counts what reaches it: the main connection, as the read threads' fallback. */
function counted(session: SqlSession): SqlSession & { calls: number } {
  const counter = {
    calls: 0,
    rows: (sql: string, params?: readonly SqlValue[]): Promise<Row[]> => {
      counter.calls++;
      return session.rows(sql, params);
    },
    exec: (sql: string, params?: readonly SqlValue[]) => session.exec(sql, params),
    each: (sql: string, params: readonly SqlValue[], onRow: (row: Row) => void) => session.each(sql, params, onRow),
  };
  return counter;
}

/** What a matrix read hands its sink, put together again. */
async function collected(read: (sink: MatrixSink) => Promise<void>) {
  const got = { count: -1, dimensions: -1, slices: 0, ids: [] as string[], digests: [] as number[], groups: [] as string[], vectors: [] as number[] };
  await read({
    begin: (count, dimensions) => Object.assign(got, { count, dimensions }),
    add: (slice) => {
      got.slices++;
      got.ids.push(...slice.ids);
      got.digests.push(...slice.digests);
      got.groups.push(...slice.groups);
      got.vectors.push(...slice.vectors);
    },
  });
  return got;
}

// Counts to n in SQLite itself: a read that keeps a connection busy for a while.
const SLOW_COUNT = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT count(*) AS c FROM n';

describe('SqliteReadThreads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-read-threads-'));
  const path = join(dir, 'trellis.db');
  let db: Database.Database;
  let main: SqlSession & { calls: number };
  let threads: SqliteReadThreads;

  beforeAll(() => {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER, data BLOB)');
    db.prepare('INSERT INTO t VALUES (?, ?, ?)').run('a', 1, Buffer.from([1, 2, 3]));
    main = counted(new SqliteDatabase(db));
    threads = new SqliteReadThreads(path, main, 2);
  });
  afterAll(async () => {
    await threads.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads on its own connections, BLOBs back as Buffers, and sees what the main connection committed', async () => {
    expect(await threads.rows('SELECT id, n, data FROM t WHERE id = ?', ['a'])).toEqual([{ id: 'a', n: 1, data: Buffer.from([1, 2, 3]) }]);
    expect(Buffer.isBuffer((await threads.rows('SELECT data FROM t'))[0]!.data)).toBe(true);
    db.prepare('INSERT INTO t VALUES (?, ?, ?)').run('b', 2, null);
    // Both workers in turn: each statement is a read transaction of its own, begun after the commit.
    for (let i = 0; i < 2; i++) expect(await threads.rows('SELECT count(*) AS c FROM t')).toEqual([{ c: 2 }]);
    expect(main.calls).toBe(0);
  });

  it('sends a read to the worker with the fewest reads out: a ranking never waits behind a long read', async () => {
    const started = performance.now();
    const long = threads.rows(SLOW_COUNT, [8_000_000]);
    // Three short reads one after another: in turn, the second would have gone to the busy worker.
    const shortMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      expect(await threads.rows('SELECT count(*) AS c FROM t')).toEqual([{ c: 2 }]);
      shortMs.push(performance.now() - t);
    }
    await long;
    const longMs = performance.now() - started;
    expect(Math.max(...shortMs)).toBeLessThan(longMs / 4);
  });

  it('leaves the event loop free while a long read runs', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const rows = await threads.rows(SLOW_COUNT, [3_000_000]);
    clearInterval(timer);
    expect(rows).toEqual([{ c: 3_000_000 }]);
    // On the main connection the count would hold the loop from start to end: no tick at all.
    expect(ticks).toBeGreaterThan(5);
  });

  it("rejects a bad statement with SQLite's message and code, and reads on after it", async () => {
    await expect(threads.rows('SELECT nope FROM t')).rejects.toMatchObject({ message: expect.stringContaining('no such column: nope'), code: 'SQLITE_ERROR' });
    await expect(threads.rows('SELECT id FROM t ORDER BY id')).resolves.toEqual([{ id: 'a' }, { id: 'b' }]);
  });

  it('packs a matrix on the worker as the main connection packs it: columns, and vectors cut or padded to the first row', async () => {
    db.exec('CREATE TABLE m (id TEXT, stamp TEXT, grp TEXT, embedding BLOB)');
    const insert = db.prepare('INSERT INTO m VALUES (?, ?, ?, ?)');
    insert.run('x', 's1', 'g1', Buffer.from(Float32Array.of(1, 2, 3).buffer));
    insert.run('y', 's2', 'g2', Buffer.from(Float32Array.of(4, 5, 6, 7).buffer));
    insert.run('z', 's3', 'g1', Buffer.from(Float32Array.of(8).buffer));
    const sql = 'SELECT id, stamp, embedding, grp FROM m ORDER BY id';
    const packed = await collected((sink) => threads.matrixRows(sql, [], sink));
    const digests = ['s1', 's2', 's3'].map(stampDigest);
    expect(packed).toEqual({ count: 3, dimensions: 3, slices: 1, ids: ['x', 'y', 'z'], digests, groups: ['g1', 'g2', 'g1'], vectors: [1, 2, 3, 4, 5, 6, 8, 0, 0] });
    expect(await collected((sink) => matrixRowsOf(new SqliteDatabase(db), sql, [], sink))).toEqual(packed);
    expect(await collected((sink) => threads.matrixRows('SELECT id, stamp FROM m ORDER BY id', [], sink))).toEqual({
      count: 3,
      dimensions: 0,
      slices: 1,
      ids: ['x', 'y', 'z'],
      digests,
      groups: [],
      vectors: [],
    });
    expect(await collected((sink) => threads.matrixRows('SELECT id, stamp FROM m WHERE id = ?', ['none'], sink))).toMatchObject({ count: 0, slices: 0, ids: [] });
    expect(main.calls).toBe(0);
  });

  it('streams a large matrix in slices of MATRIX_SLICE_ROWS, in order, to a main thread slow to store them (the worker waits for it)', async () => {
    db.exec('CREATE TABLE big (id TEXT, stamp TEXT, embedding BLOB)');
    const insert = db.prepare('INSERT INTO big VALUES (?, ?, ?)');
    const n = MATRIX_SLICE_ROWS * 10 + 7;
    db.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(`r${String(i).padStart(6, '0')}`, `s${i}`, Buffer.from(Float32Array.of(i, -i).buffer));
    })();
    let largest = 0;
    const sink = {
      count: 0,
      rows: 0,
      begin: (count: number) => (sink.count = count),
      add: (slice: RowSlice) => {
        // Busy storing: the worker sends faster and must wait for these (SLICES_AHEAD), not hang.
        const until = performance.now() + 5;
        while (performance.now() < until);
        expect(slice.vectors[0]).toBe(sink.rows);
        sink.rows += slice.ids.length;
        largest = Math.max(largest, slice.ids.length);
      },
    };
    const allocatedBefore = threads.sliceBuffers;
    await threads.matrixRows('SELECT id, stamp, embedding FROM big ORDER BY id', [], sink);
    expect([sink.count, sink.rows, largest]).toEqual([n, n, MATRIX_SLICE_ROWS]);
    // Eleven slices in buffers the main thread handed back: a few new ones, not one each.
    expect(threads.sliceBuffers - allocatedBefore).toBeLessThanOrEqual(6);
    // A second read uses them again, and floats land where they belong.
    sink.rows = 0;
    await threads.matrixRows('SELECT id, stamp, embedding FROM big ORDER BY id', [], sink);
    expect(sink.rows).toBe(n);
    expect(threads.sliceBuffers - allocatedBefore).toBeLessThanOrEqual(12);
  });

  it('fails a matrix read with the error its sink threw, and reads on after it', async () => {
    const failing = { begin: () => undefined, add: () => { throw new Error('no room for it'); } };
    await expect(threads.matrixRows('SELECT id, stamp, embedding FROM m', [], failing)).rejects.toThrow('no room for it');
    await expect(threads.rows('SELECT count(*) AS c FROM m')).resolves.toEqual([{ c: 3 }]);
  });

  it('refuses writes', async () => {
    await expect(threads.exec()).rejects.toThrow('only reads');
  });

  it('hands reads to the main connection when its worker cannot open the database, and after it stopped', async () => {
    const fallback = counted(new SqliteDatabase(db));
    const broken = new SqliteReadThreads(join(dir, 'missing.db'), fallback, 1);
    expect(await broken.rows('SELECT count(*) AS c FROM t')).toEqual([{ c: 2 }]);
    expect(await broken.rows('SELECT count(*) AS c FROM t')).toEqual([{ c: 2 }]);
    expect(fallback.calls).toBe(2);
    await broken.stop();

    const stopped = new SqliteReadThreads(path, fallback, 1);
    await stopped.stop();
    expect(await stopped.rows('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    expect(fallback.calls).toBe(3);
  });
});
