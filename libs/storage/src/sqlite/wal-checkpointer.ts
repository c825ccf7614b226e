import { Worker } from 'node:worker_threads';

/** What the worker is started with. */
interface CheckpointerInit {
  /** better-sqlite3, resolved by the main thread (eval'd code resolves from the working directory). */
  readonly driver: string;
  readonly path: string;
  readonly intervalMs: number;
}

// Plain CommonJS, evaluated as the worker's script: no build output to find, from source or dist.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
// Never waits: a checkpoint that cannot run now runs at the next tick.
db.pragma('busy_timeout = 0');
const tick = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(tick);
  db.close();
  parentPort.close();
});
`;

/**
 * Copies the WAL back into the database file from a worker thread, on its own connection, every
 * `intervalMs`. SQLite runs this checkpoint inside the COMMIT that crosses wal_autocheckpoint,
 * on the writer's thread: during indexing, every few hundred chunks one graph write's commit
 * took 50-130 ms (pages copied and the file synced) while the event loop waited. A passive
 * checkpoint never blocks the writer, and the writer's own autocheckpoint stays as the fallback
 * should this thread fall behind.
 */
export class WalCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(path: string, intervalMs = 250) {
    const init: CheckpointerInit = { driver: require.resolve('better-sqlite3'), path, intervalMs };
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: init });
    // A checkpointer must not keep the process alive, nor take it down: checkpoints are an optimisation.
    this.worker.unref();
    this.worker.on('error', () => undefined);
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
  }

  /** Stops after the checkpoint in progress, if any; resolves once the worker's connection is closed. */
  async stop(): Promise<void> {
    // Held from here to its exit: a caller awaiting the stop must not see the process end first.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
