import type { CommunityRefreshResult } from '@trellis/graph';
import type { TrellisMetrics } from '@trellis/observability';
import type { CommunityTelemetry } from './community.service';

/** Community gauges and counters: count, stale ones, reports written, LLM summary calls, refresh time. */
export class CommunityMetrics implements CommunityTelemetry {
  constructor(private readonly metrics: TrellisMetrics) {}

  refreshed(knowledgeBase: string, result: CommunityRefreshResult): void {
    const kb = this.metrics.knowledgeBaseLabel(knowledgeBase);
    if (result.reportsWritten > 0) this.metrics.community.reports.inc({ knowledge_base: kb }, result.reportsWritten);
    const ok = result.llmCalls - result.llmFailures;
    if (ok > 0) this.metrics.community.summaryCalls.inc({ knowledge_base: kb, outcome: 'ok' }, ok);
    if (result.llmFailures > 0) this.metrics.community.summaryCalls.inc({ knowledge_base: kb, outcome: 'error' }, result.llmFailures);
    this.metrics.community.refreshDuration.observe({ kind: result.full ? 'full' : 'incremental' }, result.durationMs / 1000);
  }

  observed(knowledgeBase: string, total: number, stale: number): void {
    const kb = this.metrics.knowledgeBaseLabel(knowledgeBase);
    this.metrics.community.communities.set({ knowledge_base: kb }, total);
    this.metrics.community.stale.set({ knowledge_base: kb }, stale);
  }
}
