import { MessageChannel, Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { MATRIX_SLICE_ROWS, matrixRowsOf } from '../sql/vector-ranking';
import type { MatrixRowReader, MatrixSink } from '../sql/vector-ranking';
import { stampDigest } from '@trellis/vectors';
import type { RowSlice } from '@trellis/vectors';

/** What each worker is started with. */
interface ReaderInit {
  /** better-sqlite3, resolved by the main thread (eval'd code resolves from the working directory). */
  readonly driver: string;
  readonly path: string;
  readonly cacheKib: number;
  readonly sliceRows: number;
  /** Slices sent and not yet stored by the main thread (Int32Array over a SharedArrayBuffer): the worker waits past SLICES_AHEAD. */
  readonly unstored: SharedArrayBuffer;
  readonly slicesAhead: number;
  /** Where the main thread hands back the buffers of slices it stored, for the worker's next slices. */
  readonly recycled: MessagePort;
}

interface Request {
  readonly id: number;
  /** `rows`: the rows as objects; `matrix`: a matrix streamed in slices packed in the worker (see matrixRows). */
  readonly kind: 'rows' | 'matrix';
  readonly sql: string;
  readonly params: readonly SqlValue[];
}

type Reply =
  | { readonly id: number; readonly rows: Row[] }
  | { readonly id: number; readonly begin: { readonly count: number; readonly dimensions: number } }
  | { readonly id: number; readonly slice: RowSlice }
  | { readonly id: number; readonly done: true; readonly allocated: number }
  | { readonly id: number; readonly error: { message: string; code?: string } };

// Plain CommonJS, evaluated as the worker's script: no build output to find, from source or dist.
// Every statement is its own read transaction on a read-only connection, so it sees what was
// committed when it started (WAL), and never takes a lock a writer waits for.
const WORKER_SOURCE = `
const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const stampDigest = ${stampDigest.toString()};
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma('cache_size = -' + workerData.cacheKib);
// As the main connection waits: only a WAL recovery makes a reader wait at all.
db.pragma('busy_timeout = 5000');
const statements = new Map();
parentPort.on('message', (request) => {
  if (request === 'stop') {
    db.close();
    workerData.recycled.close();
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
    // A matrix goes in slices of columns (ids and groups as strings, stamps as their digests) and
    // one buffer of floats, each moved (not copied) to the main thread, which stores a slice in the
    // index as it comes: the whole read (282 MB of relationship floats at 100k chunks) is never held
    // at once. A message of 180k row objects would cost the main thread seconds to take apart.
    const packs = statement.columns().some((c) => c.name === 'embedding');
    const unstored = new Int32Array(workerData.unstored);
    let ids = [], digests = new Float64Array(workerData.sliceRows), groups = [], bytes = new Uint8Array(0), dimensions = 0, begun = false, allocated = 0;
    // A buffer the main thread handed back (one large enough), else a new one.
    const sliceBytes = () => {
      const size = workerData.sliceRows * dimensions * 4;
      for (let spare; size > 0 && (spare = receiveMessageOnPort(workerData.recycled)) !== undefined; ) {
        if (spare.message.byteLength >= size) return new Uint8Array(spare.message);
      }
      allocated++;
      return new Uint8Array(size);
    };
    const send = () => {
      // Never more than slicesAhead slices the main thread has not stored yet (it may be busy
      // with queries): waits in steps, so a main thread that stopped listening cannot hang it.
      for (let waited = 0; Atomics.load(unstored, 0) >= workerData.slicesAhead && waited < 600; waited++) Atomics.wait(unstored, 0, Atomics.load(unstored, 0), 100);
      Atomics.add(unstored, 0, 1);
      const vectors = new Float32Array(bytes.buffer, 0, ids.length * dimensions);
      const sent = digests.subarray(0, ids.length);
      parentPort.postMessage({ id: request.id, slice: { ids, digests: sent, groups, vectors } }, [bytes.buffer, digests.buffer]);
      ids = [];
      digests = new Float64Array(workerData.sliceRows);
      groups = [];
    };
    // One read transaction: the count and the rows see the same snapshot.
    db.exec('BEGIN');
    try {
      const count = db.prepare('SELECT count(*) AS n FROM (' + request.sql + ')').get(...params).n;
      for (const row of statement.iterate(...params)) {
        if (!begun) {
          dimensions = packs ? row.embedding.byteLength >> 2 : 0;
          parentPort.postMessage({ id: request.id, begin: { count, dimensions } });
          begun = true;
        }
        if (ids.length === 0) bytes = sliceBytes();
        if (packs) bytes.set(row.embedding.subarray(0, dimensions * 4), ids.length * dimensions * 4);
        digests[ids.length] = stampDigest(String(row.stamp));
        ids.push(String(row.id));
        if (row.grp !== undefined) groups.push(String(row.grp));
        if (ids.length === workerData.sliceRows) send();
      }
      if (!begun) parentPort.postMessage({ id: request.id, begin: { count: 0, dimensions: 0 } });
      if (ids.length > 0) send();
    } finally {
      db.exec('COMMIT');
    }
    parentPort.postMessage({ id: request.id, done: true, allocated });
  } catch (error) {
    parentPort.postMessage({ id: request.id, error: { message: String(error && error.message), code: error && error.code } });
  }
});
`;

/** A request's answer, and how to get it from the fallback should the worker be lost; a matrix read's slices go to its sink. */
interface Pending {
  readonly fallback: () => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly sink?: MatrixSink;
  /** The first error the sink threw: the read fails with it once the worker is done. */
  sinkError?: Error;
  /** A matrix read's slices not yet stored, from its count. */
  slicesLeft?: number;
}

/** Slices a worker may send ahead of the main thread storing them: about 25 MB of 384-dimension floats. */
const SLICES_AHEAD = 4;

/** One worker, its pending requests, and whether it still answers. */
interface Reader {
  readonly worker: Worker;
  /** Each request's answer, and how to get it from the fallback should the worker be lost. */
  readonly pending: Map<number, Pending>;
  /** The worker's count of slices sent and not yet stored (see ReaderInit.unstored). */
  readonly unstored: Int32Array;
  /** The main thread's end of ReaderInit.recycled. */
  readonly recycle: MessagePort;
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
  private allocatedSliceBuffers = 0;

  constructor(
    private readonly path: string,
    private readonly fallback: SqlSession,
    private readonly threads: number,
    private readonly cacheKib = 16_384,
  ) {}

  /** Buffers the workers allocated for the slices of matrix reads (others were handed back and used again). */
  get sliceBuffers(): number {
    return this.allocatedSliceBuffers;
  }

  rows(sql: string, params: readonly SqlValue[] = []): Promise<Row[]> {
    return this.ask<Row[]>('rows', sql, params, () => this.fallback.rows(sql, params));
  }

  /** A matrix's rows streamed in slices packed on the worker; on the fallback, read as any session's are (matrixRowsOf). */
  matrixRows(sql: string, params: readonly SqlValue[], sink: MatrixSink): Promise<void> {
    return this.ask<void>('matrix', sql, params, () => matrixRowsOf(this.fallback, sql, params, sink), sink);
  }

  /** Sends a request to the next live worker; with none (or once stopped), answers it from the fallback. */
  private ask<T>(kind: Request['kind'], sql: string, params: readonly SqlValue[], fallback: () => Promise<T>, sink?: MatrixSink): Promise<T> {
    const reader = this.stopped ? undefined : this.reader();
    if (reader === undefined) return fallback();
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      reader.pending.set(id, { fallback, resolve: resolve as (value: unknown) => void, reject, sink });
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

  /**
   * Stores a slice through its read's sink, then tells the worker it may send another. The sink
   * copies the slice's floats, so their buffer goes back to the worker for a later slice while
   * more than SLICES_AHEAD of the read's slices are still to come: a matrix read then holds a
   * few buffers instead of leaving one per slice (at 100k chunks 45 of 6 MB for the
   * relationships) to the collector, and none is left waiting in the worker after it.
   */
  private stored(reader: Reader, waiting: Pending | undefined, slice: RowSlice): void {
    try {
      this.sinkCall(waiting, (sink) => sink.add(slice));
    } finally {
      Atomics.sub(reader.unstored, 0, 1);
      Atomics.notify(reader.unstored, 0);
    }
    if (waiting?.slicesLeft === undefined) return;
    waiting.slicesLeft--;
    const buffer = slice.vectors.buffer;
    if (waiting.slicesLeft > SLICES_AHEAD && buffer.byteLength > 0 && !(buffer instanceof SharedArrayBuffer)) reader.recycle.postMessage(buffer, [buffer]);
  }

  /** Calls the sink of a read still waiting and not yet failed; an error it throws fails the read when the worker is done. */
  private sinkCall(waiting: Pending | undefined, call: (sink: MatrixSink) => void): void {
    if (waiting?.sink === undefined || waiting.sinkError !== undefined) return;
    try {
      call(waiting.sink);
    } catch (error) {
      waiting.sinkError = error instanceof Error ? error : new Error(String(error));
    }
  }

  /** A request's last message: its rows, the end of its matrix, or its error. */
  private answered(reader: Reader, reply: Exclude<Reply, { slice: RowSlice } | { begin: unknown }>): void {
    const waiting = reader.pending.get(reply.id);
    reader.pending.delete(reply.id);
    if (reader.pending.size === 0) reader.worker.unref();
    if ('done' in reply) this.allocatedSliceBuffers += reply.allocated;
    if (!waiting) return;
    if ('rows' in reply) waiting.resolve(reply.rows.map(withBuffers));
    else if ('error' in reply) waiting.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    else if (waiting.sinkError) waiting.reject(waiting.sinkError);
    else waiting.resolve(undefined);
  }

  private start(): Reader {
    const unstored = new SharedArrayBuffer(4);
    const { port1: recycle, port2: recycled } = new MessageChannel();
    const init: ReaderInit = { driver: require.resolve('better-sqlite3'), path: this.path, cacheKib: this.cacheKib, sliceRows: MATRIX_SLICE_ROWS, unstored, slicesAhead: SLICES_AHEAD, recycled };
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: init, transferList: [recycled] });
    const reader: Reader = { worker, pending: new Map(), alive: true, unstored: new Int32Array(unstored), recycle };
    reader.worker.unref();
    reader.worker.on('message', (reply: Reply) => {
      const waiting = reader.pending.get(reply.id);
      if ('slice' in reply) this.stored(reader, waiting, reply.slice);
      else if ('begin' in reply) {
        if (waiting !== undefined) waiting.slicesLeft = Math.ceil(reply.begin.count / MATRIX_SLICE_ROWS);
        this.sinkCall(waiting, (sink) => sink.begin(reply.begin.count, reply.begin.dimensions));
      }
      else this.answered(reader, reply);
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
  for (const column in row) {
    const value = row[column];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) row[column] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  }
  return row;
}
