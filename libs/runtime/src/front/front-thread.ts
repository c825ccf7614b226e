import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { FromFront, FrontRejection, FrontSettings, ToFront } from './front-messages';

/** Where the admission counts the front reports go (the core's metrics). */
export interface FrontAdmissionSink {
  counts(inFlight: number, queued: number): void;
  refused(rejection: FrontRejection): void;
}

export interface FrontThread {
  readonly grpcPort: number;
  readonly httpPort: number;
  setServing(serving: boolean): void;
  reportReadiness(ready: boolean, reason?: string): void;
  /** Stops taking requests, lets those in flight finish, and ends the thread. */
  close(): Promise<void>;
}

/**
 * The compiled worker script. Tests that run the server from TypeScript sources use the
 * build output beside them, since a worker thread runs plain JavaScript.
 */
function workerScript(): string {
  const beside = join(__dirname, 'front.worker.js');
  if (existsSync(beside)) return beside;
  const built = resolve(__dirname, '../../dist/front/front.worker.js');
  if (existsSync(built)) return built;
  throw new Error(`the front thread's script is not built (${built}): run npm run build`);
}

/**
 * Starts the front thread (see `front.worker.ts`) and waits until it listens on the public
 * ports. Its admission counts go to `sink`; `onExit` hears of a thread that ends unasked (the
 * process then has no public ports).
 */
export function startFrontThread(settings: FrontSettings, sink: FrontAdmissionSink, onExit: (reason: string) => void): Promise<FrontThread> {
  const worker = new Worker(workerScript(), { workerData: settings });
  const post = (message: ToFront) => worker.postMessage(message);
  let closing = false;
  let closed: (() => void) | undefined;
  return new Promise<FrontThread>((resolveStart, rejectStart) => {
    let started = false;
    worker.on('message', (message: FromFront) => {
      switch (message.kind) {
        case 'listening':
          started = true;
          return resolveStart({
            grpcPort: message.grpcPort,
            httpPort: message.httpPort,
            setServing: (serving) => post({ kind: 'serving', serving }),
            reportReadiness: (ready, reason) => post({ kind: 'readiness', ready, ...(reason === undefined ? {} : { reason }) }),
            close: () =>
              new Promise<void>((resolveClose) => {
                closing = true;
                closed = resolveClose;
                post({ kind: 'close' });
              }),
          });
        case 'failed':
          closing = true;
          void worker.terminate();
          return rejectStart(new Error(`the front thread could not start: ${message.message}`));
        case 'admission':
          sink.counts(message.inFlight, message.queued);
          for (const rejection of message.rejected) sink.refused(rejection);
          return;
        case 'closed':
          void worker.terminate().then(() => closed?.());
          return;
      }
    });
    worker.on('error', (error) => {
      if (!started) rejectStart(error);
      else if (!closing) onExit(`the front thread failed: ${error.stack ?? error.message}`);
    });
    worker.on('exit', (code) => {
      if (!started) rejectStart(new Error(`the front thread exited with ${code} before it listened`));
      else if (!closing) onExit(`the front thread exited with ${code}`);
      closed?.();
    });
  });
}
