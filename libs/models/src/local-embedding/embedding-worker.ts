import { parentPort, workerData } from 'node:worker_threads';
import type { ModelFiles } from './model-files';
import type { ThreadReply, ThreadRequest } from '../worker-thread-calls';
import { SentenceEncoder } from './sentence-encoder';

/** Messages between the embedder and its worker thread: the model's loading, then the texts to embed and their vectors. */
export type WorkerRequest = { readonly texts: readonly string[] };
/** Asks the worker to finish what it is running, free the ONNX session and exit. */
export type WorkerFarewell = { readonly kind: 'close' };
export type WorkerReply = { readonly kind: 'ready'; readonly dimensions: number } | { readonly kind: 'failed'; readonly error: string } | ThreadReply<Float32Array[]>;

export interface WorkerInit {
  readonly files: ModelFiles;
  readonly threads: number;
  /** Resolved in the parent, so the worker loads the same onnxruntime-node wherever it runs. */
  readonly runtimePath: string;
}

/* The worker thread: loads the model once, then answers embedding requests one at a time. */
if (parentPort !== null && workerData !== null && typeof workerData === 'object' && 'files' in workerData) {
  const port = parentPort;
  const init = workerData as WorkerInit;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ort = require(init.runtimePath) as typeof import('onnxruntime-node');
  SentenceEncoder.load(ort, init.files, init.threads).then(
    (encoder) => {
      let queue = Promise.resolve();
      let closing = false;
      port.on('message', (request: ThreadRequest<WorkerRequest> | WorkerFarewell) => {
        if ('kind' in request) {
          closing = true;
          queue = queue.then(() => encoder.release()).finally(() => port.close());
          return;
        }
        if (closing) return;
        queue = queue.then(async () => {
          if (closing) return;
          try {
            const vectors = await encoder.embed(request.texts);
            port.postMessage({ id: request.id, result: vectors } satisfies WorkerReply, vectors.map((v) => v.buffer as ArrayBuffer));
          } catch (error) {
            port.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies WorkerReply);
          }
        });
      });
      port.postMessage({ kind: 'ready', dimensions: encoder.dimensions } satisfies WorkerReply);
    },
    (error: unknown) => port.postMessage({ kind: 'failed', error: error instanceof Error ? error.message : String(error) } satisfies WorkerReply),
  );
}
