import { createHash } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { checkWithin } from './bounded-check';
import { CachedReading } from './cached-reading';
import { CommunityGraphMetrics } from './community-graph-metrics';
import { OutboxMetrics } from './outbox-metrics';
import type { CachedReadingOptions } from './cached-reading';

/** One row of the document backlog: how many documents of a knowledge base are in a status. */
export interface DocumentStatusCount {
  readonly tenant: string;
  readonly knowledgeBase: string;
  readonly status: string;
  readonly count: number;
}

/** One row of `trellis_consumer_lag_messages`: events of a topic a consumer group has not handled yet. */
export interface ConsumerLagReading {
  readonly topic: string;
  readonly group: string;
  readonly messages: number;
}

/**
 * The lag is read from the broker at most this often, however often Prometheus scrapes; a
 * scrape waits at most `waitMs` for it (then shows the previous reading).
 */
export const CONSUMER_LAG_READING = { maxAgeMs: 15_000, waitMs: 2_000 } as const;

/** Knowledge bases beyond this many share the label value `other`, keeping series bounded. */
export const MAX_KNOWLEDGE_BASE_SERIES = 50;

/** A scrape or probe must not hang on a dead dependency: readiness counts as failed after this. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * The process's Prometheus metrics. Label values are bounded sets (method names, status
 * codes, topics, outcomes, model names, capped knowledge-base names): never document or
 * chunk ids.
 */
export interface MetricsOptions {
  /** Tenant ids and knowledge-base names as label values (TRELLIS_METRICS_NAMES); opaque digests otherwise. */
  readonly namesInLabels?: boolean;
}

export class TrellisMetrics {
  readonly registry = new Registry();

  readonly grpcRequests = new Counter({
    name: 'trellis_grpc_requests_total',
    help: 'gRPC requests handled, by method and status code name (OK, INVALID_ARGUMENT, ...).',
    labelNames: ['service', 'method', 'code'] as const,
    registers: [this.registry],
  });

  readonly grpcDuration = new Histogram({
    name: 'trellis_grpc_request_duration_seconds',
    help: 'gRPC request latency (streams: until the last message), by method and status code name.',
    labelNames: ['service', 'method', 'code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly grpcInFlight = new Gauge({
    name: 'trellis_grpc_requests_in_flight',
    help: 'gRPC calls holding one of the server\'s concurrency slots (TRELLIS_MAX_CONCURRENT_REQUESTS); health and reflection not counted.',
    registers: [this.registry],
  });

  readonly grpcQueued = new Gauge({
    name: 'trellis_grpc_requests_queued',
    help: 'gRPC calls waiting for a concurrency slot (at most TRELLIS_MAX_QUEUED_REQUESTS).',
    registers: [this.registry],
  });

  readonly grpcRejected = new Counter({
    name: 'trellis_grpc_requests_rejected_total',
    help: 'gRPC calls refused with RESOURCE_EXHAUSTED by load shedding, by method and reason (queue_full: limit and queue taken; queue_timeout: waited TRELLIS_MAX_QUEUE_WAIT_MS).',
    labelNames: ['method', 'reason'] as const,
    registers: [this.registry],
  });

  readonly retrievalDuration = new Histogram({
    name: 'trellis_retrieval_duration_seconds',
    help: 'Retrieval latency measured at the gRPC edge, by method and requested mode.',
    labelNames: ['method', 'mode'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly eventsHandled = new Counter({
    name: 'trellis_events_handled_total',
    help: 'Indexing events handled, by topic, consumer group and outcome (ok; error, retried until it succeeds or dead_letter).',
    labelNames: ['topic', 'group', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly eventDuration = new Histogram({
    name: 'trellis_event_processing_duration_seconds',
    help: 'Time to handle one indexing event, by topic.',
    labelNames: ['topic'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60],
    registers: [this.registry],
  });

  readonly eventRetries = new Counter({
    name: 'trellis_event_retries_total',
    help: 'Redeliveries of indexing events after a failed attempt (attempt 2 and later), by topic and consumer group.',
    labelNames: ['topic', 'group'] as const,
    registers: [this.registry],
  });

  readonly consumerCrashes = new Counter({
    name: 'trellis_consumer_crashes_total',
    help: 'Kafka consumers that stopped on an error, by consumer group and who started them again (kafkajs after a retriable error; bus: a new consumer after any other).',
    labelNames: ['group', 'restarted_by'] as const,
    registers: [this.registry],
  });

  private consumerLagReading: CachedReading<readonly ConsumerLagReading[]> | undefined;

  /** Events published and not yet handled, per topic and consumer group, as the bus reports them. */
  readonly consumerLag = new Gauge({
    name: 'trellis_consumer_lag_messages',
    help: 'Indexing events published and not yet handled, by topic and consumer group, summed over partitions (Kafka: end offsets minus committed offsets, read at most every 15 s; in-process: queued events).',
    labelNames: ['topic', 'group'] as const,
    registers: [this.registry],
    collect: async () => {
      if (this.consumerLagReading === undefined) return;
      const rows = await this.consumerLagReading.get();
      this.consumerLag.reset();
      for (const row of rows ?? []) this.consumerLag.set({ topic: row.topic, group: row.group }, row.messages);
    },
  });

  readonly sweeperRedrives = new Counter({
    name: 'trellis_sweeper_redrives_total',
    help: 'Indexing work the sweeper found stuck, by what (document, chunk) and what it did (redriven; gave_up: marked failed after the re-drive cap).',
    labelNames: ['item', 'action'] as const,
    registers: [this.registry],
  });

  readonly entityResolutionRetries = new Counter({
    name: 'trellis_entity_resolution_retries_total',
    help: "Chunk graph writes whose mentions were resolved again because a concurrent write had just created one of the entities they meant to create (first mentions of one name written side by side).",
    registers: [this.registry],
  });

  /** The transactional outbox: what its stages and relay published, and the relay's backlog. */
  readonly outbox = new OutboxMetrics(this.registry);

  /** The entity graph's communities: how many, how many stale, reports written, their LLM calls, refresh time. */
  readonly community = new CommunityGraphMetrics(this.registry);

  readonly documentsIngested = new Counter({
    name: 'trellis_documents_ingested_total',
    help: 'Documents offered for indexing over gRPC, by outcome (new_version, unchanged, rejected).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly llmRequests = new Counter({
    name: 'trellis_llm_requests_total',
    help: 'Model provider calls, by model, operation (chat, chat_stream, embeddings) and outcome (ok, error).',
    labelNames: ['model', 'operation', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly llmTokens = new Counter({
    name: 'trellis_llm_tokens_total',
    help: 'Tokens the model provider reported, by model and direction (input, output).',
    labelNames: ['model', 'direction'] as const,
    registers: [this.registry],
  });

  readonly llmCost = new Counter({
    name: 'trellis_llm_estimated_cost_dollars_total',
    help: 'Estimated provider cost in US dollars from reported tokens and the price table (TRELLIS_LLM_PRICES), by model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  readonly llmDuration = new Histogram({
    name: 'trellis_llm_request_duration_seconds',
    help: 'Model provider call latency (streams: until the last token), by model and operation.',
    labelNames: ['model', 'operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly extractionItems = new Counter({
    name: 'trellis_extraction_items_total',
    help: 'Entities and relationships in LLM extraction replies, by kind (entity, relationship, reply), outcome (kept, repaired, dropped) and reason.',
    labelNames: ['kind', 'outcome', 'reason'] as const,
    registers: [this.registry],
  });

  readonly extractionCalls = new Counter({
    name: 'trellis_extraction_llm_calls_total',
    help: 'LLM calls made for extraction (gleaning turns included), by knowledge base (capped, then "other").',
    labelNames: ['knowledge_base'] as const,
    registers: [this.registry],
  });

  readonly extractionTokens = new Counter({
    name: 'trellis_extraction_llm_tokens_total',
    help: 'Tokens the provider reported for extraction calls, by knowledge base and direction (input, output).',
    labelNames: ['knowledge_base', 'direction'] as const,
    registers: [this.registry],
  });

  readonly extractionCost = new Counter({
    name: 'trellis_extraction_estimated_cost_dollars_total',
    help: 'Estimated cost in US dollars of extraction calls (TRELLIS_LLM_PRICES), by knowledge base.',
    labelNames: ['knowledge_base'] as const,
    registers: [this.registry],
  });

  readonly extractionCache = new Counter({
    name: 'trellis_extraction_cache_total',
    help: 'Chunk extractions by knowledge base and cache outcome (hit: no LLM call; miss: extracted).',
    labelNames: ['knowledge_base', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly llmBudgetLimit = new Gauge({
    name: 'trellis_llm_budget_limit',
    help: "A knowledge base's LLM budget, by knowledge base, period (day, month) and unit (tokens, dollars); budgets without a limit there are not exported.",
    labelNames: ['knowledge_base', 'period', 'unit'] as const,
    registers: [this.registry],
  });

  readonly llmBudgetSpent = new Gauge({
    name: 'trellis_llm_budget_spent',
    help: "A budgeted knowledge base's LLM spend in the current UTC day or month, by knowledge base, period and unit (tokens, dollars), as last read by extraction.",
    labelNames: ['knowledge_base', 'period', 'unit'] as const,
    registers: [this.registry],
  });

  readonly llmBudgetPausedChunks = new Gauge({
    name: 'trellis_llm_budget_paused_chunks',
    help: 'Chunks whose LLM extraction waits for their knowledge base budget, by knowledge base.',
    labelNames: ['knowledge_base'] as const,
    registers: [this.registry],
  });

  readonly llmBudgetPauses = new Counter({
    name: 'trellis_llm_budget_pauses_total',
    help: 'Chunk extractions paused because the knowledge base budget was reached, by knowledge base.',
    labelNames: ['knowledge_base'] as const,
    registers: [this.registry],
  });

  readonly llmBudgetResumes = new Counter({
    name: 'trellis_llm_budget_resumed_chunks_total',
    help: 'Paused chunk extractions resumed because the budget allowed again (raised, or a new period), by knowledge base.',
    labelNames: ['knowledge_base'] as const,
    registers: [this.registry],
  });

  private readonly knowledgeBaseLabels = new Set<string>();

  /**
   * The label value for a knowledge base on counters: its name for the first
   * MAX_KNOWLEDGE_BASE_SERIES seen by this process, `other` beyond, so series stay bounded.
   */
  knowledgeBaseLabel(name: string): string {
    const label = this.nameLabel('kb', name);
    if (this.knowledgeBaseLabels.has(label)) return label;
    if (this.knowledgeBaseLabels.size >= MAX_KNOWLEDGE_BASE_SERIES) return 'other';
    this.knowledgeBaseLabels.add(label);
    return label;
  }

  /** A tenant id or knowledge-base name as a label value: itself when names are allowed, else a digest. */
  private nameLabel(kind: 'tenant' | 'kb', name: string): string {
    if (this.options.namesInLabels || name === 'other') return name;
    return `${kind}-${createHash('sha256').update(kind).update('\0').update(name).digest('hex').slice(0, 12)}`;
  }

  readonly embeddingBatchDuration = new Histogram({
    name: 'trellis_embedding_batch_duration_seconds',
    help: 'Latency of one embedding request (one batch of texts), by model.',
    labelNames: ['model'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  readonly embeddingTexts = new Counter({
    name: 'trellis_embedding_texts_total',
    help: 'Texts sent to the embedding provider, by model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });

  private documentSource: (() => Promise<readonly DocumentStatusCount[]>) | undefined;

  /**
   * Documents whose indexing has not finished, read from the store on every scrape. Only
   * the process that owns the documents API registers a source, so series are not repeated.
   */
  readonly documentsIndexing = new Gauge({
    name: 'trellis_documents_indexing',
    help: 'Documents whose indexing has not finished, by tenant, knowledge base and status (read from the store at scrape time).',
    labelNames: ['tenant', 'knowledge_base', 'status'] as const,
    registers: [this.registry],
    collect: async () => {
      if (this.documentSource === undefined) return;
      const rows = await this.documentSource();
      this.documentsIndexing.reset();
      for (const row of capKnowledgeBases(rows)) {
        this.documentsIndexing.inc({ tenant: this.nameLabel('tenant', row.tenant), knowledge_base: this.nameLabel('kb', row.knowledgeBase), status: row.status }, row.count);
      }
    },
  });

  private readinessCheck: (() => Promise<void>) | undefined;

  /** The readiness probe's answer at scrape time, so alerts need no kube-state-metrics. */
  readonly ready = new Gauge({
    name: 'trellis_ready',
    help: '1 when the process answers /readyz (its store and broker respond), 0 otherwise; checked at scrape time.',
    registers: [this.registry],
    collect: async () => {
      if (this.readinessCheck === undefined) return;
      this.ready.set(await checkWithin(this.readinessCheck, READINESS_TIMEOUT_MS, 'readiness check').then(() => 1, () => 0));
    },
  });

  constructor(
    serviceName: string,
    private readonly options: MetricsOptions = {},
  ) {
    this.registry.setDefaultLabels({ service: serviceName });
    collectDefaultMetrics({ register: this.registry, prefix: 'trellis_' });
  }

  /** Sets the check behind `trellis_ready` (the same as /readyz). */
  trackReadiness(check: () => Promise<void>): void {
    this.readinessCheck = check;
  }

  /**
   * Sets where `trellis_consumer_lag_messages` comes from (the event bus). Readings are cached
   * (`CONSUMER_LAG_READING` unless `timing` says otherwise); a failed reading is passed to
   * `onError` and leaves the gauge without series until a reading succeeds.
   */
  trackConsumerLag(
    source: () => Promise<readonly ConsumerLagReading[]>,
    onError: (error: unknown) => void,
    timing: Pick<CachedReadingOptions, 'maxAgeMs' | 'waitMs'> = CONSUMER_LAG_READING,
  ): void {
    this.consumerLagReading = new CachedReading(source, { ...timing, onError });
  }

  /** Sets where `trellis_documents_indexing` reads its values from. */
  trackDocuments(source: () => Promise<readonly DocumentStatusCount[]>): void {
    this.documentSource = source;
  }
}

/** Keeps the largest knowledge bases as they are and folds the rest into `other`. */
function capKnowledgeBases(rows: readonly DocumentStatusCount[]): DocumentStatusCount[] {
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(`${r.tenant}\u0000${r.knowledgeBase}`, (totals.get(`${r.tenant}\u0000${r.knowledgeBase}`) ?? 0) + r.count);
  const kept = new Set([...totals.entries()].sort((a, b) => b[1] - a[1]).slice(0, MAX_KNOWLEDGE_BASE_SERIES).map(([k]) => k));
  return rows.map((r) => (kept.has(`${r.tenant}\u0000${r.knowledgeBase}`) ? r : { ...r, tenant: 'other', knowledgeBase: 'other' }));
}

export const METRICS = Symbol.for('trellis.metrics');
