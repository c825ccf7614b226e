import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import type { EmbeddingProvider } from '../embedding-provider';
import { WorkerThreadCalls } from '../worker-thread-calls';
import type { ModelFiles } from './model-files';
import type { WorkerFarewell, WorkerInit, WorkerReply, WorkerRequest } from './embedding-worker';

/** Texts per worker request: bounds the latency a long indexing batch adds to a query behind it. */
const REQUEST_TEXTS = 32;
/** How long a closing worker may take to finish its inference and exit before it is terminated. */
const CLOSE_GRACE_MS = 10_000;

/**
 * A real sentence-embedding model in process, off the event loop: one worker thread owns the
 * ONNX session (with `threads` intra-op threads); callers' texts are sent in slices so a query
 * embedding waits for at most one slice of an indexing batch. Deterministic for the same files.
 */
export class LocalModelEmbedder implements EmbeddingProvider {
  readonly model: string;
  readonly dimensions: number;
  private readonly calls: WorkerThreadCalls<WorkerRequest, Float32Array[]>;

  private constructor(name: string, files: ModelFiles, worker: Worker) {
    this.model = `local:${name}`;
    this.dimensions = files.dimensions;
    this.calls = new WorkerThreadCalls(worker, {
      replied: (message) => new Error(`embedding model ${name}: ${message}`),
      exited: (code) => new Error(`embedding worker exited with code ${code}`),
    });
  }

  /** Starts the worker and resolves once the model is loaded; rejects with the loader's error. */
  static async start(name: string, files: ModelFiles, threads: number): Promise<LocalModelEmbedder> {
    const init: WorkerInit = { files, threads, runtimePath: require.resolve('onnxruntime-node') };
    const fromSource = __filename.endsWith('.ts');
    const worker = new Worker(join(__dirname, `embedding-worker.${fromSource ? 'ts' : 'js'}`), {
      workerData: init,
      // Tests run this package from its TypeScript source.
      execArgv: fromSource ? ['--require', require.resolve('tsx/cjs')] : [],
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (reply: WorkerReply) => {
        if ('kind' in reply) {
          worker.off('message', onMessage);
          if (reply.kind === 'ready') resolve();
          else reject(new Error(`could not load embedding model ${name} from ${files.dir}: ${reply.error}`));
        }
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    return new LocalModelEmbedder(name, files, worker);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const slices: Array<Promise<Float32Array[]>> = [];
    for (let start = 0; start < texts.length; start += REQUEST_TEXTS) slices.push(this.calls.call({ texts: texts.slice(start, start + REQUEST_TEXTS) }));
    return (await Promise.all(slices)).flat();
  }

  /** Fails the texts still owed at once; the worker finishes the inference it is in, frees the session and exits. */
  async close(): Promise<void> {
    await this.calls.close(new Error('embedding model closed'), { kind: 'close' } satisfies WorkerFarewell, CLOSE_GRACE_MS);
  }
}
