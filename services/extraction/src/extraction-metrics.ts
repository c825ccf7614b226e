import type { TrellisMetrics } from '@trellis/observability';
import type { LlmUsage } from '@trellis/storage';
import type { ExtractionTelemetry } from './extraction.service';
import type { ExtractionReport } from './extraction-report';

/** Extraction's counters: item decisions by reason, and calls, tokens, cost and cache hits per knowledge base. */
export class ExtractionMetrics implements ExtractionTelemetry {
  constructor(private readonly metrics: TrellisMetrics) {}

  extracted(knowledgeBase: string, report: ExtractionReport, usage: LlmUsage): void {
    const kb = this.metrics.knowledgeBaseLabel(knowledgeBase);
    for (const item of report.items()) this.metrics.extractionItems.inc({ kind: item.kind, outcome: item.outcome, reason: item.reason }, item.count);
    this.metrics.extractionCache.inc({ knowledge_base: kb, outcome: 'miss' });
    if (usage.calls > 0) this.metrics.extractionCalls.inc({ knowledge_base: kb }, usage.calls);
    if (usage.inputTokens > 0) this.metrics.extractionTokens.inc({ knowledge_base: kb, direction: 'input' }, usage.inputTokens);
    if (usage.outputTokens > 0) this.metrics.extractionTokens.inc({ knowledge_base: kb, direction: 'output' }, usage.outputTokens);
    if (usage.estimatedCostUsd > 0) this.metrics.extractionCost.inc({ knowledge_base: kb }, usage.estimatedCostUsd);
  }

  pausedChunk(knowledgeBase: string): void {
    this.metrics.llmBudgetPauses.inc({ knowledge_base: this.metrics.knowledgeBaseLabel(knowledgeBase) });
  }

  cacheHit(knowledgeBase: string): void {
    this.metrics.extractionCache.inc({ knowledge_base: this.metrics.knowledgeBaseLabel(knowledgeBase), outcome: 'hit' });
  }
}
