import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_CALL_PRIORITY } from '@trellis/models';
import type { CallBudget, CallPriority, CallRelease } from '@trellis/models';
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

/** Rank of each CallPriority in a line: lower goes first. */
const RANK: Record<CallPriority, number> = { interactive: 0, 'follow-up': 1, bulk: 2 };

/** A caller of this process waiting for a slot. */
interface Waiter {
  readonly holder: string;
  readonly rank: number;
  readonly granted: () => void;
  readonly failed: (error: unknown) => void;
}

/** The callers of this process waiting for a slot of one model, and whether one polls for them. */
interface SlotLine {
  readonly waiters: Waiter[];
  polling: boolean;
  /** Ends the poller's sleep: a slot of this process was freed. */
  wake: (() => void) | null;
  /** A slot of this process was freed while the poller was claiming, not sleeping: claim again at once. */
  freed: boolean;
}

/**
 * The LLM call budget of a deployment, kept in the shared store so every extraction worker
 * (every process, every pod) draws from the same concurrency slots and token buckets per
 * model. Waiting is polling with jitter: cheap at the call rates LLMs allow.
 *
 * Within a process, callers line up per model: one poll at a time claims a slot for the caller
 * at the head, and a slot the process frees wakes it at once. The head is the caller of the
 * highest CallPriority that asked first, so a person's question does not wait behind an
 * ingest's extraction calls, nor a summary a graph write waits for behind new chunks. Without
 * a line, a caller that had waited long polled seldom (its backoff reaching 2 s) while every
 * newcomer tried at once, and a graph write's summary waited out all 997 extraction calls of a
 * corpus, holding the graph stage.
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

  async acquire(model: string, estimatedTokens: number, priority: CallPriority = DEFAULT_CALL_PRIORITY): Promise<CallRelease> {
    const { maxConcurrency, requestsPerMinute, tokensPerMinute } = this.settings;
    const holder = randomUUID();
    const leaseKey = `llm:${model}:slots`;
    if (maxConcurrency > 0) await this.takeSlot(leaseKey, holder, RANK[priority]);
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

  /** Joins the model's line and resolves once the poller has claimed a slot for this caller. */
  private takeSlot(key: string, holder: string, rank: number): Promise<void> {
    let line = this.lines.get(key);
    if (line === undefined) {
      line = { waiters: [], polling: false, wake: null, freed: false };
      this.lines.set(key, line);
    }
    const waiting = new Promise<void>((granted, failed) => {
      const waiters = line.waiters;
      // By priority, then arrival: a newcomer goes behind every caller of the same or a higher priority.
      let at = waiters.length;
      while (at > 0 && waiters[at - 1]!.rank > rank) at--;
      waiters.splice(at, 0, { holder, rank, granted, failed });
    });
    if (!line.polling) void this.poll(key, line);
    return waiting;
  }

  /** Claims slots for the line's head until no one waits, sleeping between failed claims (woken when this process frees one). */
  private async poll(key: string, line: SlotLine): Promise<void> {
    line.polling = true;
    try {
      for (let attempt = 0; line.waiters.length > 0; ) {
        const head = line.waiters[0]!;
        line.freed = false;
        let claimed: boolean;
        try {
          claimed = await this.store.acquireLease(key, head.holder, this.settings.maxConcurrency, this.clock() + this.settings.leaseMs, this.clock());
        } catch (error) {
          line.waiters.splice(line.waiters.indexOf(head), 1);
          head.failed(error);
          continue;
        }
        if (claimed) {
          line.waiters.splice(line.waiters.indexOf(head), 1);
          head.granted();
          attempt = 0;
          continue;
        }
        if (line.freed) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, jittered(Math.min(MAX_POLL_MS, MIN_POLL_MS * 2 ** Math.min(attempt, 6))));
          line.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        line.wake = null;
        attempt++;
      }
    } finally {
      line.polling = false;
    }
  }

  private async releaseSlot(key: string, holder: string): Promise<void> {
    await this.store.releaseLease(key, holder);
    const line = this.lines.get(key);
    if (line?.wake) line.wake();
    else if (line) line.freed = true;
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
