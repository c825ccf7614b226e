import type { KbScope } from '@trellis/contracts';
import { hasLlmBudget, readBudgetState } from '@trellis/models';
import type { BudgetState } from '@trellis/models';
import type { TrellisRepositories } from '@trellis/storage';

/** Where the gate reports what it read of a budgeted knowledge base (metrics). */
export interface BudgetTelemetry {
  budgetRead(knowledgeBase: string, state: BudgetState): void;
}

/** How long one reading of a knowledge base's budget and spend is used: what bounds the overshoot of concurrent calls, and the reads per chunk. */
const DEFAULT_READ_TTL_MS = 1000;

/**
 * Whether a knowledge base's LLM budget lets one more extraction call start: its settings and
 * its spend of today and this month, read from the store (so a raised budget and every
 * process's spend count) at most once per `ttlMs` per knowledge base. Knowledge bases without
 * a budget cost one settings read per `ttlMs`.
 */
export class BudgetGate {
  private readonly readings = new Map<string, { at: number; state: BudgetState | null; name: string }>();

  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'llmUsage'>,
    private readonly telemetry?: BudgetTelemetry,
    private readonly ttlMs = DEFAULT_READ_TTL_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The exhausted budget that holds extraction back, or null when a call may start. */
  async exhausted(scope: KbScope): Promise<BudgetState | null> {
    const key = `${scope.tenantId}\u0000${scope.kbId}`;
    const now = this.clock();
    let reading = this.readings.get(key);
    if (reading === undefined || now - reading.at >= this.ttlMs) {
      const kb = await this.repos.knowledgeBases.findKnowledgeBase({ tenantId: scope.tenantId }, scope.kbId);
      const budget = kb?.settings.llmBudget;
      const state = kb !== null && hasLlmBudget(budget) ? await readBudgetState(this.repos.llmUsage, scope, budget, new Date(now)) : null;
      reading = { at: now, state, name: kb?.name ?? '' };
      this.readings.set(key, reading);
      if (state !== null) this.telemetry?.budgetRead(reading.name, state);
    }
    return reading.state !== null && reading.state.exhausted !== '' ? reading.state : null;
  }

  /** Forgets a reading, so the next check reads the store again (after a resume). */
  forget(scope: KbScope): void {
    this.readings.delete(`${scope.tenantId}\u0000${scope.kbId}`);
  }
}
