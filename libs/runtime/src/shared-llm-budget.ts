import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallBudget, CallRelease } from '@trellis/models';
import type { LlmBudgetRepository } from '@trellis/storage';

export interface SharedLlmBudgetSettings {
  /** Calls in flight per model across the deployment; 0 = unlimited. */
  readonly maxConcurrency: number;
  readonly requestsPerMinute: number;
  readonly tokensPerMinute: number;
  /**
   * How long a slot stays taken when its holder never releases it (a killed worker): longer
   * than a call with all its retries can take, so a live call never loses its slot.
   */
  readonly leaseMs: number;
}

/** Upper bound of one wait between polls, so a freed slot or refilled bucket is seen soon. */
const MAX_POLL_MS = 2_000;
const MIN_POLL_MS = 25;

/** The callers of this process waiting for a slot of one model. */
interface SlotLine {
  /** Settles when the caller ahead has its slot (or gave up): the next one's turn to poll. */
  last: Promise<void>;
  /** Ends the polling caller's sleep: a slot of this process was freed. */
  wake: (() => void) | null;
}

/**
 * The LLM call budget of a deployment, kept in the shared store so every extraction worker
 * (every process, every pod) draws from the same concurrency slots and token buckets per
 * model. Waiting is polling with jitter: cheap at the call rates LLMs allow.
 *
 * Within a process, callers take slots in the order they asked: only the first polls, and a
 * slot the process frees wakes it at once. Without that line, a caller that had waited long
 * polled seldom (its backoff reaching 2 s) while every newcomer tried at once, and a graph
 * write's summary waited out all 997 extraction calls of a corpus, holding the graph stage.
 */
export class SharedLlmBudget implements CallBudget {
  private readonly lines = new Map<string, SlotLine>();

  constructor(
    private readonly store: LlmBudgetRepository,
    private readonly settings: SharedLlmBudgetSettings,
    private readonly clock: () => number = Date.now,
  ) {}

  /** True when any limit is set; otherwise the budget is not worth a store round trip. */
  get limited(): boolean {
    const s = this.settings;
    return s.maxConcurrency > 0 || s.requestsPerMinute > 0 || s.tokensPerMinute > 0;
  }

  async acquire(model: string, estimatedTokens: number): Promise<CallRelease> {
    const { maxConcurrency, requestsPerMinute, tokensPerMinute, leaseMs } = this.settings;
    const holder = randomUUID();
    const leaseKey = `llm:${model}:slots`;
    if (maxConcurrency > 0) await this.takeSlot(leaseKey, holder, maxConcurrency, leaseMs);
    try {
      if (requestsPerMinute > 0) await this.take(`llm:${model}:rpm`, 1, requestsPerMinute);
      if (tokensPerMinute > 0) await this.take(`llm:${model}:tpm`, estimatedTokens, tokensPerMinute);
    } catch (error) {
      if (maxConcurrency > 0) await this.releaseSlot(leaseKey, holder);
      throw error;
    }
    return async (actualTokens) => {
      try {
        // What the call cost beyond its estimate is charged after the fact, as a debt.
        if (tokensPerMinute > 0 && actualTokens !== undefined && actualTokens > estimatedTokens) {
          await this.store.takeFromBucket(`llm:${model}:tpm`, actualTokens - estimatedTokens, tokensPerMinute, this.clock(), true);
        }
      } finally {
        if (maxConcurrency > 0) await this.releaseSlot(leaseKey, holder);
      }
    };
  }

  /** Waits for this process's callers ahead of it, then polls the store until a slot is its own. */
  private async takeSlot(key: string, holder: string, slots: number, leaseMs: number): Promise<void> {
    let line = this.lines.get(key);
    if (line === undefined) {
      line = { last: Promise.resolve(), wake: null };
      this.lines.set(key, line);
    }
    const ahead = line.last;
    let done!: () => void;
    line.last = new Promise<void>((resolve) => (done = resolve));
    await ahead;
    try {
      for (let attempt = 0; !(await this.store.acquireLease(key, holder, slots, this.clock() + leaseMs, this.clock())); attempt++) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, jittered(Math.min(MAX_POLL_MS, MIN_POLL_MS * 2 ** Math.min(attempt, 6))));
          line.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        line.wake = null;
      }
    } finally {
      done();
    }
  }

  private async releaseSlot(key: string, holder: string): Promise<void> {
    await this.store.releaseLease(key, holder);
    this.lines.get(key)?.wake?.();
  }

  private async take(key: string, amount: number, perMinute: number): Promise<void> {
    for (;;) {
      const waitMs = await this.store.takeFromBucket(key, amount, perMinute, this.clock());
      if (waitMs === 0) return;
      await sleep(jittered(Math.min(MAX_POLL_MS, waitMs)));
    }
  }
}

function jittered(ms: number): number {
  return Math.max(1, Math.round(ms * (0.75 + Math.random() * 0.5)));
}
