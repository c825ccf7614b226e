import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ResourceLimits } from 'node:worker_threads';
import { WorkerThreadCalls } from '@trellis/models';
import type { ExtractionResult } from '@trellis/storage';
import type { Extractor } from '../extractor';
import { LOCAL_EXTRACTOR_MODEL, LOCAL_RULES_VERSION } from './local-extractor-identity';
import type { ExtractionRequest } from './extraction-worker';

/** Worker threads of the local extractor: the cores but one (the event loop's), at most four. */
export function localExtractionThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/**
 * How long a thread may sit without a chunk before it exits: its heap (the NLP model's lexicon
 * and what extraction left, 50-70 MB at 100k chunks) is then returned to the system until the
 * next ingest, which starts a thread again (a few hundred milliseconds).
 */
export const EXTRACTION_IDLE_EXIT_MS = 15_000;

/**
 * A thread's young generation: 8 MB instead of V8's default, which grows to 32 MB. Extraction
 * makes short-lived objects per chunk and keeps few, yet a thread kept its whole young generation
 * once busy (56 MB of heap, 22 in use, during an ingest at 100k chunks). Only here: with the same
 * limit on the embedding and front threads, which answer questions too, the questions after an
 * ingest were slower in each of three runs and the peak no lower (docs/benchmarks.md, session 34).
 */
const EXTRACTION_THREAD_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8 };

/** One worker thread and the chunks it owes answers for. */
type ExtractionThread = WorkerThreadCalls<ExtractionRequest, ExtractionResult>;

/**
 * The local extractor off the event loop: chunks go to a few worker threads, each running
 * LocalExtractor, the least busy first. Same model and rules version as LocalExtractor (the
 * pool names them without loading the NLP model into the main thread), so
 * the extraction cache and results are the same. Threads start on the first chunk (a server
 * with a language model never starts them) and exit after `idleExitMs` without one; one that
 * dies fails the chunks it held (their events are retried) and is replaced on the next chunk.
 */
export class LocalExtractorPool implements Extractor {
  readonly model = LOCAL_EXTRACTOR_MODEL;
  readonly promptVersion = LOCAL_RULES_VERSION;
  readonly usesLlm = false;
  private readonly threads: Array<ExtractionThread | undefined>;
  private closed = false;
  /** Per slot, chunks its threads answered: a wait for idleness is over once the slot's thread answers another. */
  private readonly answered: number[];

  constructor(
    size = localExtractionThreads(),
    private readonly idleExitMs = EXTRACTION_IDLE_EXIT_MS,
  ) {
    this.threads = new Array<ExtractionThread | undefined>(Math.max(1, size)).fill(undefined);
    this.answered = this.threads.map(() => 0);
  }

  /** Threads running now. */
  get running(): number {
    return this.threads.filter((t) => t !== undefined).length;
  }

  extract(text: string): Promise<ExtractionResult> {
    if (this.closed) return Promise.reject(new Error('the local extractor is closed'));
    const slot = this.leastBusy();
    const thread = this.threads[slot]!;
    const result = thread.call({ text });
    void result.then(
      () => this.exitWhenIdle(slot, thread),
      () => this.exitWhenIdle(slot, thread),
    );
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.threads.filter((t): t is ExtractionThread => t !== undefined);
    this.threads.fill(undefined);
    await Promise.all(running.map((t) => t.terminate()));
  }

  /** The slot of the thread with the fewest chunks owed, started if it was not running. */
  private leastBusy(): number {
    let best = -1;
    for (let i = 0; i < this.threads.length; i++) {
      const thread = this.threads[i];
      if (thread === undefined) {
        // An idle slot is as good as it gets: start its thread.
        this.threads[i] = this.start(i);
        return i;
      }
      if (best === -1 || thread.owed < this.threads[best]!.owed) best = i;
    }
    return best;
  }

  /** Once the thread owes nothing, ends it if it is given nothing for `idleExitMs` (each chunk it answers starts the wait again). */
  private exitWhenIdle(slot: number, thread: ExtractionThread): void {
    if (thread.owed > 0) return;
    const answered = ++this.answered[slot]!;
    setTimeout(() => {
      if (this.answered[slot] !== answered || thread.owed > 0 || this.threads[slot] !== thread) return;
      this.threads[slot] = undefined;
      void thread.terminate();
    }, this.idleExitMs).unref();
  }

  private start(slot: number): ExtractionThread {
    const fromSource = __filename.endsWith('.ts');
    const script = join(__dirname, `extraction-worker.${fromSource ? 'ts' : 'js'}`);
    if (!existsSync(script)) throw new Error(`local extraction worker script missing at ${script}`);
    // Tests run this package from its TypeScript source.
    const worker = new Worker(script, { execArgv: fromSource ? ['--require', require.resolve('tsx/cjs')] : [], resourceLimits: EXTRACTION_THREAD_LIMITS, stdout: false, stderr: false });
    const thread: ExtractionThread = new WorkerThreadCalls(
      worker,
      {
        replied: (message) => new Error(`local extraction failed: ${message}`),
        exited: (code) => new Error(`the local extraction thread exited with code ${code}`),
      },
      () => {
        if (this.threads[slot] === thread) this.threads[slot] = undefined;
      },
    );
    return thread;
  }
}
