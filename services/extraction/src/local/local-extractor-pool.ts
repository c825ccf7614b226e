import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ExtractionResult } from '@trellis/storage';
import type { Extractor } from '../extractor';
import { LOCAL_EXTRACTOR_MODEL, LOCAL_RULES_VERSION } from './local-extractor-identity';
import type { ExtractionReply } from './extraction-worker';

/** Worker threads of the local extractor: the cores but one (the event loop's), at most four. */
export function localExtractionThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, cores - 1));
}

interface Waiter {
  readonly resolve: (result: ExtractionResult) => void;
  readonly reject: (error: Error) => void;
}

/** One worker thread and the chunks it owes answers for. */
class ExtractionThread {
  readonly pending = new Map<number, Waiter>();
  private readonly worker: Worker;

  constructor(script: string, fromSource: boolean, onExit: (thread: ExtractionThread) => void) {
    // Tests run this package from its TypeScript source.
    this.worker = new Worker(script, { execArgv: fromSource ? ['--require', require.resolve('tsx/cjs')] : [], stdout: false, stderr: false });
    this.worker.on('message', (reply: ExtractionReply) => {
      const waiter = this.pending.get(reply.id);
      if (waiter === undefined) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) this.worker.unref();
      if ('error' in reply) waiter.reject(new Error(`local extraction failed: ${reply.error}`));
      else waiter.resolve(reply.result);
    });
    const fail = (error: Error) => {
      for (const waiter of this.pending.values()) waiter.reject(error);
      this.pending.clear();
      onExit(this);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', (code) => fail(new Error(`the local extraction thread exited with code ${code}`)));
    this.worker.unref();
  }

  extract(id: number, text: string): Promise<ExtractionResult> {
    return new Promise((resolve, reject) => {
      // Referenced only while it owes answers: an idle pool never keeps the process alive.
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, text });
    });
  }

  async terminate(): Promise<void> {
    await this.worker.terminate();
  }
}

/**
 * The local extractor off the event loop: chunks go to a few worker threads, each running
 * LocalExtractor, the least busy first. Same model and rules version as LocalExtractor (the
 * pool names them without loading the NLP model into the main thread), so
 * the extraction cache and results are the same. Threads start on the first chunk (a server
 * with a language model never starts them); one that dies fails the chunks it held (their
 * events are retried) and is replaced on the next chunk.
 */
export class LocalExtractorPool implements Extractor {
  readonly model = LOCAL_EXTRACTOR_MODEL;
  readonly promptVersion = LOCAL_RULES_VERSION;
  readonly usesLlm = false;
  private readonly threads: Array<ExtractionThread | undefined>;
  private nextId = 0;
  private closed = false;

  constructor(size = localExtractionThreads()) {
    this.threads = new Array<ExtractionThread | undefined>(Math.max(1, size)).fill(undefined);
  }

  extract(text: string): Promise<ExtractionResult> {
    if (this.closed) return Promise.reject(new Error('the local extractor is closed'));
    return this.leastBusy().extract(this.nextId++, text);
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = this.threads.filter((t): t is ExtractionThread => t !== undefined);
    this.threads.fill(undefined);
    await Promise.all(running.map((t) => t.terminate()));
  }

  private leastBusy(): ExtractionThread {
    let best = -1;
    for (let i = 0; i < this.threads.length; i++) {
      const thread = this.threads[i];
      if (thread === undefined) {
        // An idle slot is as good as it gets: start its thread.
        this.threads[i] = this.start(i);
        return this.threads[i]!;
      }
      if (best === -1 || thread.pending.size < this.threads[best]!.pending.size) best = i;
    }
    return this.threads[best]!;
  }

  private start(slot: number): ExtractionThread {
    const fromSource = __filename.endsWith('.ts');
    const script = join(__dirname, `extraction-worker.${fromSource ? 'ts' : 'js'}`);
    if (!existsSync(script)) throw new Error(`local extraction worker script missing at ${script}`);
    return new ExtractionThread(script, fromSource, (gone) => {
      if (this.threads[slot] === gone) this.threads[slot] = undefined;
    });
  }
}
