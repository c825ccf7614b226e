import { InvalidArgumentError } from 'commander';
import type { Command } from 'commander';
import type { v1 } from '@trellis/contracts';
import { integer } from './parsers';

/** The LLM budget flags shared by `kb create` and `kb update`; 0 removes a limit. */
export interface BudgetFlags {
  dailyTokens?: number;
  monthlyTokens?: number;
  dailyUsd?: number;
  monthlyUsd?: number;
}

function dollars(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError('must be 0 (no limit) or a positive number of US dollars');
  return n;
}

export function addBudgetOptions(command: Command): Command {
  return command
    .option('--daily-tokens <n>', 'LLM tokens (input + output) the knowledge base may spend per UTC day; 0: no limit', integer(0, Number.MAX_SAFE_INTEGER))
    .option('--monthly-tokens <n>', 'LLM tokens per UTC month; 0: no limit', integer(0, Number.MAX_SAFE_INTEGER))
    .option('--daily-usd <dollars>', 'estimated LLM dollars per UTC day (TRELLIS_LLM_PRICES); 0: no limit', dollars)
    .option('--monthly-usd <dollars>', 'estimated LLM dollars per UTC month; 0: no limit', dollars);
}

export function hasBudgetFlags(flags: BudgetFlags): boolean {
  return [flags.dailyTokens, flags.monthlyTokens, flags.dailyUsd, flags.monthlyUsd].some((v) => v !== undefined);
}

/** The budget to send: `current` with the flags given applied on top. */
export function budgetSettings(flags: BudgetFlags, current?: v1.LlmBudget): v1.LlmBudget {
  return {
    dailyTokens: flags.dailyTokens ?? current?.dailyTokens ?? 0,
    monthlyTokens: flags.monthlyTokens ?? current?.monthlyTokens ?? 0,
    dailyUsd: flags.dailyUsd ?? current?.dailyUsd ?? 0,
    monthlyUsd: flags.monthlyUsd ?? current?.monthlyUsd ?? 0,
  };
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** "today 1,200 of 50,000 tokens · this month 1,200 tokens, $0.0012 of $5 · PAUSED: ..." */
export function budgetSummary(status: v1.LlmBudgetStatus): string {
  const b = status.budget;
  const of = (limit: number | undefined, unit: (n: number) => string) => (limit ? ` of ${unit(limit)}` : '');
  const usd = (n: number) => `$${n.toFixed(4).replace(/\.?0+$/, '')}`;
  const period = (name: string, spent: v1.LlmSpendTotals | undefined, tokens: number | undefined, dollarsLimit: number | undefined) =>
    `${name} ${int(spent?.tokens ?? 0)}${of(tokens, int)} tokens, ${usd(spent?.estimatedCostUsd ?? 0)}${of(dollarsLimit, usd)}`;
  const parts = [period('today', status.today, b?.dailyTokens, b?.dailyUsd), period('this month', status.thisMonth, b?.monthlyTokens, b?.monthlyUsd)];
  const limited = b !== undefined && (b.dailyTokens > 0 || b.monthlyTokens > 0 || b.dailyUsd > 0 || b.monthlyUsd > 0);
  if (!limited) parts.push('no limit set');
  if (status.exhausted) parts.push(`PAUSED: ${status.exhausted} (resets ${status.resetsAt})`);
  if (status.pausedChunks > 0) parts.push(`${status.pausedChunks} chunk(s) waiting`);
  return parts.join(' · ');
}
