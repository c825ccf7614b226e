import { Inject, Logger, Module } from '@nestjs/common';
import type { OnModuleDestroy } from '@nestjs/common';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import type { TrellisConfig } from '@trellis/config';
import type { EventBus, EventOutbox } from '@trellis/messaging';
import { EVENT_BUS, EVENT_OUTBOX } from '@trellis/messaging';
import { LLM_PRICES, LOGGER, METRICS } from '@trellis/observability';
import type { LlmPriceTable, Logger as ProcessLogger, TrellisMetrics } from '@trellis/observability';
import { BUDGET_PAUSE_REPOSITORY, CHUNK_REPOSITORY, COMMUNITY_REPOSITORY, CONFIG, DOCUMENT_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, GRAPH_SUMMARY_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, LLM_BUDGET_REPOSITORY, LLM_USAGE_REPOSITORY, createSummaryRefresher } from '@trellis/runtime';
import type {
  BudgetPauseRepository,
  ChunkRepository,
  CommunityRepository,
  DocumentRepository,
  ExtractionCacheRepository,
  GraphSummaryRepository,
  KnowledgeBaseRepository,
  LlmBudgetRepository,
  LlmUsageRepository,
} from '@trellis/storage';
import { DocumentIngestionService } from './document-ingestion.service';
import { DocumentReindexService } from './document-reindex.service';
import { IngestEstimator } from './estimate/ingest-estimator';
import { KnowledgeBaseController } from './handlers/knowledge-base.controller';
import { KnowledgeBaseService } from './knowledge-base.service';
import { StuckWorkSweeper } from './sweeper/stuck-work-sweeper';
import { indexingBacklog } from './indexing-backlog';
import { SweeperSchedule } from './handlers/sweeper-schedule';

@Module({
  controllers: [KnowledgeBaseController],
  providers: [
    {
      provide: KnowledgeBaseService,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        llmUsage: LlmUsageRepository,
        graphSummaries: GraphSummaryRepository,
        communities: CommunityRepository,
        budgetPauses: BudgetPauseRepository,
        models: Models,
        config: TrellisConfig,
      ) => {
        const logger = new Logger('KnowledgeBases');
        const summaries = createSummaryRefresher(graphSummaries, models, (message) => logger.warn(message));
        return new KnowledgeBaseService({ knowledgeBases, documents, llmUsage, communities, budgetPauses }, summaries, config.resolution.summaryMaxChars, models.embedderInfo);
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, LLM_USAGE_REPOSITORY, GRAPH_SUMMARY_REPOSITORY, COMMUNITY_REPOSITORY, BUDGET_PAUSE_REPOSITORY, MODELS, CONFIG],
    },
    {
      provide: IngestEstimator,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        extractionCache: ExtractionCacheRepository,
        llmUsage: LlmUsageRepository,
        ingestion: DocumentIngestionService,
        models: Models,
        prices: LlmPriceTable,
        config: TrellisConfig,
      ) =>
        new IngestEstimator({ knowledgeBases, documents, extractionCache, llmUsage }, ingestion, {
          llmModel: models.llm?.model ?? null,
          embedding: models.embedderInfo,
          defaultOutputPercent: config.llmCost.estimateOutputPercent,
          splitTimeoutMs: config.parseTimeoutMs,
        }, prices),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, LLM_USAGE_REPOSITORY, DocumentIngestionService, MODELS, LLM_PRICES, CONFIG],
    },
    {
      provide: DocumentIngestionService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, outbox: EventOutbox, config: TrellisConfig, models: Models, processLogger: ProcessLogger, bus: EventBus) => {
        const logger = processLogger.child({ component: 'ingestion' });
        const backlog = indexingBacklog(bus, (error) => logger.warn({ err: error.message }, 'could not read the indexing backlog; a re-upload not yet indexed is announced again'));
        return new DocumentIngestionService({ knowledgeBases, documents }, outbox, config, models.embedder, backlog);
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, EVENT_OUTBOX, CONFIG, MODELS, LOGGER, EVENT_BUS],
    },
    {
      provide: DocumentReindexService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, ingestion: DocumentIngestionService, models: Models) =>
        new DocumentReindexService({ knowledgeBases, documents }, ingestion, models.embedder),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, DocumentIngestionService, MODELS],
    },
    {
      // Ingestion owns the documents, so it re-drives the ones whose events were lost (see the sweeper).
      provide: SweeperSchedule,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        chunks: ChunkRepository,
        llmBudget: LlmBudgetRepository,
        outbox: EventOutbox,
        ingestion: DocumentIngestionService,
        metrics: TrellisMetrics,
        config: TrellisConfig,
        processLogger: ProcessLogger,
        bus: EventBus,
      ) => {
        const logger = processLogger.child({ component: 'sweeper' });
        const { intervalMs, stuckAfterMs, maxRedrives } = config.sweeper;
        const sweeper = new StuckWorkSweeper({ knowledgeBases, documents, chunks, llmBudget }, outbox, ingestion, {
          stuckAfterMs,
          maxRedrives,
          batchSize: SWEEP_BATCH,
          leaseMs: Math.max(2 * intervalMs, MIN_SWEEP_LEASE_MS),
          backlog: indexingBacklog(bus, (error) => logger.warn({ err: error.message }, 'could not read the indexing backlog; sweeping as if there were none')),
        }, {
          redriven: (item, count) => metrics.sweeperRedrives.inc({ item, action: 'redriven' }, count),
          gaveUp: (item, count) => metrics.sweeperRedrives.inc({ item, action: 'gave_up' }, count),
          log: (fields, message) => logger.info(fields, message),
        });
        return new SweeperSchedule(sweeper, intervalMs, (error) => logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'sweep failed; the next interval tries again'));
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, CHUNK_REPOSITORY, LLM_BUDGET_REPOSITORY, EVENT_OUTBOX, DocumentIngestionService, METRICS, CONFIG, LOGGER, EVENT_BUS],
    },
  ],
  exports: [KnowledgeBaseService, DocumentIngestionService, DocumentReindexService, IngestEstimator, SweeperSchedule],
})
export class IngestionModule implements OnModuleDestroy {
  constructor(@Inject(SweeperSchedule) private readonly sweeper: SweeperSchedule) {}

  /** The sweeper is started by the process once its bus runs (main.ts, standalone), and stopped here. */
  onModuleDestroy(): Promise<void> {
    return this.sweeper.stop();
  }
}

/** Items of each kind one sweep reads; a larger backlog is worked off over several sweeps. */
const SWEEP_BATCH = 500;
/** A sweep that hangs (store unreachable) holds the lease at most this long or two intervals. */
const MIN_SWEEP_LEASE_MS = 60_000;
