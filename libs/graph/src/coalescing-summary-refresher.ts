import type { KbScope } from '@trellis/contracts';
import type { SummaryRefresher, SummaryUsage } from './summary-refresher';

type Refresh = SummaryRefresher['refresh'];

/** The callers waiting for one refresh of a knowledge base, and what they bring to it. */
interface Batch {
  readonly scope: KbScope;
  maxChars: number;
  /** The usage sink of the caller that opened the batch: a shared summary is charged once. */
  readonly onUsage: ((usage: SummaryUsage) => void) | undefined;
  readonly waiters: Array<{ resolve: (saved: number) => void; reject: (error: unknown) => void }>;
}

interface ScopeState {
  running: boolean;
  next: Batch | null;
}

/**
 * Joins the summary refreshes that chunk writes of one knowledge base ask for while another is
 * running: at most one refresh per knowledge base at a time, and every caller that arrives
 * during it waits for the single refresh that follows. That one sees all their changes, so an
 * entity mentioned by many chunks written together is summarised and embedded once for them
 * all, not once per chunk. Each caller still resolves only after a refresh that started after
 * its own write, so a caller's summaries are current when it continues, as with a direct call.
 *
 * LLM usage of a shared refresh goes to the caller that opened it (its document), so the total
 * is charged once.
 */
export class CoalescingSummaryRefresher {
  private readonly scopes = new Map<string, ScopeState>();

  constructor(private readonly refresher: { refresh: Refresh }) {}

  refresh(scope: KbScope, maxChars: number, onUsage?: (usage: SummaryUsage) => void): Promise<number> {
    const key = `${scope.tenantId}\u0000${scope.kbId}`;
    let state = this.scopes.get(key);
    if (state === undefined) {
      state = { running: false, next: null };
      this.scopes.set(key, state);
    }
    state.next ??= { scope, maxChars, onUsage, waiters: [] };
    const batch = state.next;
    batch.maxChars = maxChars;
    const done = new Promise<number>((resolve, reject) => batch.waiters.push({ resolve, reject }));
    if (!state.running) this.runNext(key, state);
    return done;
  }

  private runNext(key: string, state: ScopeState): void {
    const batch = state.next;
    if (batch === null) {
      this.scopes.delete(key);
      return;
    }
    state.next = null;
    state.running = true;
    this.refresher.refresh(batch.scope, batch.maxChars, batch.onUsage).then(
      (saved) => this.settle(key, state, () => batch.waiters.forEach((w) => w.resolve(saved))),
      (error: unknown) => this.settle(key, state, () => batch.waiters.forEach((w) => w.reject(error))),
    );
  }

  private settle(key: string, state: ScopeState, notify: () => void): void {
    state.running = false;
    notify();
    this.runNext(key, state);
  }
}
