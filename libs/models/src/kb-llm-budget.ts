import { spendDay } from '@trellis/contracts';
import type { KbScope, LlmBudgetSettings } from '@trellis/contracts';
import type { LlmPurpose, LlmSpend, LlmUsageRepository } from '@trellis/storage';

/** LLM work over a period: calls, input and output tokens together, dollars. */
export interface SpendTotals {
  calls: number;
  tokens: number;
  estimatedCostUsd: number;
}

/** A knowledge base's budget against what it spent today and this month (UTC). */
export interface BudgetState {
  budget: LlmBudgetSettings;
  today: SpendTotals;
  thisMonth: SpendTotals;
  /** Which limit is reached, e.g. "daily token budget of 50000 reached"; '' when none. */
  exhausted: string;
  /** When the exhausted period rolls over (ISO 8601); '' when nothing is exhausted. */
  resetsAt: string;
}

export const NO_LLM_BUDGET: LlmBudgetSettings = { dailyTokens: 0, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 };

export function hasLlmBudget(budget: LlmBudgetSettings | undefined): budget is LlmBudgetSettings {
  return budget !== undefined && (budget.dailyTokens > 0 || budget.monthlyTokens > 0 || budget.dailyUsd > 0 || budget.monthlyUsd > 0);
}

export function totalsOf(spend: Record<LlmPurpose, LlmSpend>): SpendTotals {
  const all = Object.values(spend);
  return {
    calls: all.reduce((n, s) => n + s.calls, 0),
    tokens: all.reduce((n, s) => n + s.inputTokens + s.outputTokens, 0),
    estimatedCostUsd: all.reduce((n, s) => n + s.estimatedCostUsd, 0),
  };
}

/** The first day of `at`'s UTC month, as llm_spend keys days. */
export function monthStart(at: Date): string {
  return `${spendDay(at).slice(0, 7)}-01`;
}

/**
 * The limits `budget` sets, checked against the spend of today and of this month: the first one
 * reached (daily before monthly, tokens before dollars) and when its period rolls over.
 */
export function budgetState(budget: LlmBudgetSettings, today: SpendTotals, thisMonth: SpendTotals, now: Date): BudgetState {
  const nextDay = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
  const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
  const limits: Array<[number, number, string, string]> = [
    [budget.dailyTokens, today.tokens, `daily token budget of ${budget.dailyTokens} reached`, nextDay],
    [budget.dailyUsd, today.estimatedCostUsd, `daily budget of $${budget.dailyUsd} reached`, nextDay],
    [budget.monthlyTokens, thisMonth.tokens, `monthly token budget of ${budget.monthlyTokens} reached`, nextMonth],
    [budget.monthlyUsd, thisMonth.estimatedCostUsd, `monthly budget of $${budget.monthlyUsd} reached`, nextMonth],
  ];
  // The latest roll-over of every reached limit: spend only falls below all of them then.
  const reached = limits.filter(([limit, spent]) => limit > 0 && spent >= limit);
  return {
    budget,
    today,
    thisMonth,
    exhausted: reached.map(([, , reason]) => reason).join('; '),
    resetsAt: reached.length === 0 ? '' : reached.map(([, , , at]) => at).sort().at(-1)!,
  };
}

/** Reads today's and this month's spend of a knowledge base and checks them against `budget`. */
export async function readBudgetState(usage: Pick<LlmUsageRepository, 'getLlmSpend'>, scope: KbScope, budget: LlmBudgetSettings | undefined, now = new Date()): Promise<BudgetState> {
  const [today, month] = await Promise.all([usage.getLlmSpend(scope, spendDay(now)), usage.getLlmSpend(scope, monthStart(now))]);
  return budgetState(budget ?? NO_LLM_BUDGET, totalsOf(today), totalsOf(month), now);
}

/**
 * The limits that `tokens` and `usd` more of LLM work would pass, given what was spent today and
 * this month; '' when they fit.
 */
export function exceededBy(state: BudgetState, tokens: number, usd: number): string {
  const { budget, today, thisMonth } = state;
  const over: string[] = [];
  if (budget.dailyTokens > 0 && today.tokens + tokens > budget.dailyTokens) over.push(`daily token budget (${today.tokens} of ${budget.dailyTokens} spent today)`);
  if (budget.dailyUsd > 0 && today.estimatedCostUsd + usd > budget.dailyUsd) over.push(`daily budget ($${today.estimatedCostUsd.toFixed(4)} of $${budget.dailyUsd} spent today)`);
  if (budget.monthlyTokens > 0 && thisMonth.tokens + tokens > budget.monthlyTokens) over.push(`monthly token budget (${thisMonth.tokens} of ${budget.monthlyTokens} spent this month)`);
  if (budget.monthlyUsd > 0 && thisMonth.estimatedCostUsd + usd > budget.monthlyUsd) over.push(`monthly budget ($${thisMonth.estimatedCostUsd.toFixed(4)} of $${budget.monthlyUsd} spent this month)`);
  return over.length === 0 ? '' : `this ingest would pass the ${over.join(' and the ')}: LLM extraction would pause when it is reached`;
}
