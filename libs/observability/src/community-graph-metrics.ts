import { Counter, Gauge, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';

/** The entity graph's community metrics, registered with the process's others (TrellisMetrics.community). */
export class CommunityGraphMetrics {
  readonly communities: Gauge<'knowledge_base'>;
  readonly stale: Gauge<'knowledge_base'>;
  readonly reports: Counter<'knowledge_base'>;
  readonly summaryCalls: Counter<'knowledge_base' | 'outcome'>;
  readonly refreshDuration: Histogram<'kind'>;

  constructor(registry: Registry) {
    this.communities = new Gauge({
      name: 'trellis_communities',
      help: 'Communities of the entity graph (all levels), by knowledge base (capped, then "other"), as of the last refresh or listing.',
      labelNames: ['knowledge_base'] as const,
      registers: [registry],
    });
    this.stale = new Gauge({
      name: 'trellis_communities_stale',
      help: 'Communities whose members changed since their report was written, by knowledge base, as of the last refresh or listing.',
      labelNames: ['knowledge_base'] as const,
      registers: [registry],
    });
    this.reports = new Counter({
      name: 'trellis_community_reports_total',
      help: 'Community reports written anew (content changed), by knowledge base; unchanged communities reuse theirs.',
      labelNames: ['knowledge_base'] as const,
      registers: [registry],
    });
    this.summaryCalls = new Counter({
      name: 'trellis_community_summary_llm_calls_total',
      help: 'LLM calls made to write community reports, by knowledge base and outcome (ok; error: the extractive report was kept).',
      labelNames: ['knowledge_base', 'outcome'] as const,
      registers: [registry],
    });
    this.refreshDuration = new Histogram({
      name: 'trellis_community_refresh_duration_seconds',
      help: 'Time to rebuild (full) or refresh (incremental) the communities of a knowledge base.',
      labelNames: ['kind'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800],
      registers: [registry],
    });
  }
}
