import { Worker } from 'node:worker_threads';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { matrixRowsOf } from '../sql/vector-ranking';
import type { MatrixRowReader, MatrixRows } from '../sql/vector-ranking';

/** What each worker is started with. */
interface ReaderInit {
  /** better-sqlite3, resolved by the main thread (eval'd code resolves from the working directory). */
  readonly driver: string;
  readonly path: string;
  readonly cacheKib: number;
}

interface Request {
  readonly id: number;
  /** `rows`: the rows as objects; `matrix`: MatrixRows, packed in the worker (see matrixRows). */
  readonly kind: 'rows' | 'matrix';
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

type Reply =
  | { readonly id: number; readonly rows: Row[] }
  | { readonly id: number; readonly matrix: MatrixRows }
  | { readonly id: number; readonly error: { message: string; code?: string } };

// Plain CommonJS, evaluated as the worker's script: no build output to find, from source or dist.
// Every statement is its own read transaction on a read-only connection, so it sees what was
// committed when it started (WAL), and never takes a lock a writer waits for.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('cache_size = -' + workerData.cacheKib);
// As the main connection waits: only a WAL recovery makes a reader wait at all.
db.pragma('busy_timeout = 5000');
const statements = new Map();
parentPort.on('message', (request) => {
  if (request === 'stop') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    let statement = statements.get(request.sql);
    if (statement === undefined) {
      if (statements.size >= 500) statements.clear();
      statement = db.prepare(request.sql);
      statements.set(request.sql, statement);
    }
    const params = request.params.map((p) => (p instanceof Uint8Array ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p));
    if (request.kind === 'rows') {
      parentPort.postMessage({ id: request.id, rows: statement.all(...params) });
      return;
    }
    // Columns of strings and one buffer of floats, moved (not copied) to the main thread: a
    // message of 180k row objects costs the main thread seconds to take apart.
    const ids = [], stamps = [], groups = [];
    const packs = statement.columns().some((c) => c.name === 'embedding');
    // One read transaction: the count and the rows see the same snapshot.
    db.exec('BEGIN');
    let dimensions = 0;
    let bytes = new Uint8Array(0);
    try {
      // Sized once by a count: a buffer doubled as it grew held up to twice the rows, and the
      // main thread keeps it until the matrix is built (183k rows of 384 floats are 282 MB).
      const count = packs ? db.prepare('SELECT count(*) AS n FROM (' + request.sql + ')').get(...params).n : 0;
      for (const row of statement.iterate(...params)) {
        ids.push(String(row.id));
        stamps.push(String(row.stamp));
        if (row.grp !== undefined) groups.push(String(row.grp));
        if (!packs) continue;
        if (ids.length === 1) {
          dimensions = row.embedding.byteLength >> 2;
          bytes = new Uint8Array(count * dimensions * 4);
        }
        bytes.set(row.embedding.subarray(0, dimensions * 4), (ids.length - 1) * dimensions * 4);
      }
    } finally {
      db.exec('COMMIT');
    }
    const vectors = new Float32Array(bytes.buffer, 0, ids.length * dimensions);
    parentPort.postMessage({ id: request.id, matrix: { ids, stamps, groups, dimensions, vectors } }, [bytes.buffer]);
  } catch (error) {
    parentPort.postMessage({ id: request.id, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

/** One worker, its pending requests, and whether it still answers. */
interface Reader {
  readonly worker: Worker;
  /** Each request's answer, and how to get it from the fallback should the worker be lost. */
  readonly pending: Map<number, { fallback: () => Promise<unknown>; resolve: (value: unknown) => void; reject: (error: Error) => void }>;
  alive: boolean;
}

/**
 * Reads on worker threads, each with its own read-only connection to the database file: a
 * statement that runs for tens of milliseconds (a BM25 ranking of every match at 100k chunks) or
 * seconds (every vector of a knowledge base, MatrixRows) then neither blocks the event loop nor
 * waits for the vector scans of the same query, which run on the main thread meanwhile. Started on the first read; a worker that dies hands its
 * reads, and every later one, to `fallback` (the main connection). Reads only: `exec` refuses.
 */
export class SqliteReadThreads implements SqlSession, MatrixRowReader {
  private readers: Reader[] = [];
  private nextId = 0;
  private turn = 0;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly fallback: SqlSession,
    private readonly threads: number,
    private readonly cacheKib = 16_384,
  ) {}

  rows(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.ask<Row[]>('rows', sql, params, () => this.fallback.rows(sql, params));
  }

  /** A matrix's rows packed on the worker (see MatrixRows); on the fallback, read as loadMatrix reads any session. */
  matrixRows(sql: string, params: readonly SqlValue[]): Promise<MatrixRows> {
    return this.ask<MatrixRows>('matrix', sql, params, () => matrixRowsOf(this.fallback, sql, params));
  }

  /** Sends a request to the next live worker; with none (or once stopped), answers it from the fallback. */
  private ask<T>(kind: Request['kind'], sql: string, params: readonly SqlValue[], fallback: () => Promise<T>): Promise<T> {
    const reader = this.stopped ? undefined : this.reader();
    if (reader === undefined) return fallback();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      reader.pending.set(id, { fallback, resolve: resolve as (value: unknown) => void, reject });
      // Held while a read is out: an idle pool must not keep the process alive, a waiting caller must.
      reader.worker.ref();
      reader.worker.postMessage({ id, kind, sql, params } satisfies Request);
    });
  }

  exec(): Promise<number> {
    return Promise.reject(new Error('SqliteReadThreads only reads'));
  }

  async each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    for (const row of await this.rows(sql, params)) onRow(row);
  }

  /** Ends every worker after the reads it is running; later reads go to the fallback. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      this.readers
        .filter((r) => r.alive)
        .map((r) => {
          const exited = new Promise<void>((resolve) => r.worker.once('exit', () => resolve()));
          r.worker.ref();
          r.worker.postMessage('stop');
          return exited;
        }),
    );
  }

  /**
   * The live worker with the fewest reads out (the next in turn among equals), starting the pool
   * on first use; undefined when none is alive. Fewest, not merely next: a matrix read takes
   * seconds, and a ranking sent behind it would wait for all of them.
   */
  private reader(): Reader | undefined {
    if (this.readers.length === 0) this.readers = Array.from({ length: this.threads }, () => this.start());
    let best: Reader | undefined;
    for (let tries = 0; tries < this.readers.length; tries++) {
      const reader = this.readers[this.turn++ % this.readers.length]!;
      if (reader.alive && (best === undefined || reader.pending.size < best.pending.size)) best = reader;
    }
    return best;
  }

  private start(): Reader {
    const init: ReaderInit = { driver: require.resolve('better-sqlite3'), path: this.path, cacheKib: this.cacheKib };
    const reader: Reader = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData: init }), pending: new Map(), alive: true };
    reader.worker.unref();
    reader.worker.on('message', (reply: Reply) => {
      const waiting = reader.pending.get(reply.id);
      reader.pending.delete(reply.id);
      if (reader.pending.size === 0) reader.worker.unref();
      if (!waiting) return;
      if ('rows' in reply) waiting.resolve(reply.rows.map(withBuffers));
      else if ('matrix' in reply) waiting.resolve(reply.matrix);
      else waiting.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    });
    const lost = () => {
      reader.alive = false;
      // Reads the worker took and never answered run again on the main connection.
      for (const [id, waiting] of reader.pending) {
        reader.pending.delete(id);
        waiting.fallback().then(waiting.resolve, waiting.reject);
      }
    };
    reader.worker.on('error', lost);
    reader.worker.on('exit', lost);
    return reader;
  }
}

/** A row as the main connection returns it: BLOBs cross threads as Uint8Array and are Buffers again here. */
function withBuffers(row: Row): Row {
  for (const [column, value] of Object.entries(row)) if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[column] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  return row;
}
