import type { BudgetState } from '@trellis/models';
import type { TrellisMetrics } from '@trellis/observability';
import type { ResumeTelemetry } from './budget-resumer';

/** Budget gauges and pause counters, by knowledge base (capped and hashed as every knowledge-base label). */
export class BudgetMetrics implements ResumeTelemetry {
  constructor(private readonly metrics: TrellisMetrics) {}

  budgetRead(knowledgeBase: string, state: BudgetState): void {
    const kb = this.metrics.knowledgeBaseLabel(knowledgeBase);
    const periods = [
      ['day', state.budget.dailyTokens, state.budget.dailyUsd, state.today],
      ['month', state.budget.monthlyTokens, state.budget.monthlyUsd, state.thisMonth],
    ] as const;
    for (const [period, tokens, dollars, spent] of periods) {
      for (const [unit, limit] of [['tokens', tokens], ['dollars', dollars]] as const) {
        if (limit > 0) this.metrics.llmBudgetLimit.set({ knowledge_base: kb, period, unit }, limit);
        else this.metrics.llmBudgetLimit.remove({ knowledge_base: kb, period, unit });
      }
      this.metrics.llmBudgetSpent.set({ knowledge_base: kb, period, unit: 'tokens' }, spent.tokens);
      this.metrics.llmBudgetSpent.set({ knowledge_base: kb, period, unit: 'dollars' }, spent.estimatedCostUsd);
    }
  }

  paused(knowledgeBase: string, chunks: number): void {
    this.metrics.llmBudgetPausedChunks.set({ knowledge_base: this.metrics.knowledgeBaseLabel(knowledgeBase) }, chunks);
  }

  resumed(knowledgeBase: string, chunks: number): void {
    if (chunks > 0) this.metrics.llmBudgetResumes.inc({ knowledge_base: this.metrics.knowledgeBaseLabel(knowledgeBase) }, chunks);
  }
}
