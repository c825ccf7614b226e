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

/**
 * The LLM call budget of a deployment, kept in the shared store so every extraction worker
 * (every process, every pod) draws from the same concurrency slots and token buckets per
 * model. Waiting is polling with jitter: cheap at the call rates LLMs allow.
 */
export class SharedLlmBudget implements CallBudget {
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
    if (maxConcurrency > 0) {
      for (let attempt = 0; !(await this.store.acquireLease(leaseKey, holder, maxConcurrency, this.clock() + leaseMs, this.clock())); attempt++) {
        await sleep(jittered(Math.min(MAX_POLL_MS, MIN_POLL_MS * 2 ** Math.min(attempt, 6))));
      }
    }
    try {
      if (requestsPerMinute > 0) await this.take(`llm:${model}:rpm`, 1, requestsPerMinute);
      if (tokensPerMinute > 0) await this.take(`llm:${model}:tpm`, estimatedTokens, tokensPerMinute);
    } catch (error) {
      if (maxConcurrency > 0) await this.store.releaseLease(leaseKey, holder);
      throw error;
    }
    return async (actualTokens) => {
      try {
        // What the call cost beyond its estimate is charged after the fact, as a debt.
        if (tokensPerMinute > 0 && actualTokens !== undefined && actualTokens > estimatedTokens) {
          await this.store.takeFromBucket(`llm:${model}:tpm`, actualTokens - estimatedTokens, tokensPerMinute, this.clock(), true);
        }
      } finally {
        if (maxConcurrency > 0) await this.store.releaseLease(leaseKey, holder);
      }
    };
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
