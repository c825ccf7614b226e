import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { ParseReply, ParseRequest } from './parse-worker';

export interface ParseBudget {
  /** Wall-clock time one document may take to parse. */
  readonly timeoutMs: number;
  /** V8 heap the parse may use (decompressed archives are capped separately). */
  readonly maxHeapMb: number;
}

/**
 * Parses one document in a worker thread of its own, so that neither a slow parser nor a
 * large heap can hold the process: past the budget the worker is terminated, wherever the
 * parser is, and the document fails with RESOURCE_EXHAUSTED (which dead-letters at once
 * instead of retrying). Run from TypeScript sources (tests), the worker loads them through tsx.
 */
export async function parseInWorker(request: ParseRequest, budget: ParseBudget): Promise<string> {
  await workerSlots.acquire();
  try {
    return await runWorker(request, budget);
  } finally {
    workerSlots.release();
  }
}

/**
 * Parse workers running at once, per process: each may hold up to `maxHeapMb`, so a burst of
 * uploads queues here instead of multiplying memory. The time budget starts with the worker.
 */
const MAX_PARALLEL_PARSES = Math.max(1, Math.min(4, availableParallelism()));

class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  async acquire(): Promise<void> {
    if (this.free > 0) {
      this.free--;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.free++;
  }
}

const workerSlots = new Slots(MAX_PARALLEL_PARSES);

function runWorker(request: ParseRequest, budget: ParseBudget): Promise<string> {
  const source = extname(__filename) === '.ts';
  const script = join(__dirname, `parse-worker${source ? '.ts' : '.js'}`);
  if (!existsSync(script)) return Promise.reject(new Error(`parse worker script missing at ${script}`));
  const entry = source ? `require('tsx/cjs/api').register();\nrequire(${JSON.stringify(script)});` : script;
  const worker = new Worker(entry, {
    eval: source,
    resourceLimits: { maxOldGenerationSizeMb: budget.maxHeapMb },
    stdout: false,
    stderr: false,
  });
  return new Promise<string>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outcome();
      void worker.terminate();
    };
    const timer = setTimeout(
      () => settle(() => reject(new TrellisError(ErrorCode.ResourceExhausted, `parsing "${request.filename}" took longer than ${formatSeconds(budget.timeoutMs)} (TRELLIS_PARSE_TIMEOUT_MS)`))),
      budget.timeoutMs,
    );
    worker.once('message', (reply: ParseReply) =>
      settle(() => {
        if ('text' in reply) resolve(reply.text);
        else if (reply.invalid) reject(TrellisError.invalid(reply.failure));
        else reject(TrellisError.invalid(`could not parse "${request.filename}": ${reply.failure}`));
      }),
    );
    worker.once('error', (error: Error & { code?: string }) =>
      settle(() =>
        reject(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new TrellisError(ErrorCode.ResourceExhausted, `parsing "${request.filename}" needed more than ${budget.maxHeapMb} MB of memory`)
            : error,
        ),
      ),
    );
    worker.once('exit', (code) => settle(() => reject(new Error(`the parse worker exited with code ${code} before answering`))));
    worker.postMessage(request);
  });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
