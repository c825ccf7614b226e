import { Inject, Module } from '@nestjs/common';
import type { OnModuleDestroy } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import { BUDGET_PAUSE_REPOSITORY, CHUNK_REPOSITORY, CONFIG, DOCUMENT_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, LLM_BUDGET_REPOSITORY, LLM_USAGE_REPOSITORY } from '@trellis/runtime';
import { EVENT_OUTBOX } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { LLM_PRICES, LOGGER, METRICS } from '@trellis/observability';
import type { LlmPriceTable, Logger, TrellisMetrics } from '@trellis/observability';
import type {
  BudgetPauseRepository,
  ChunkRepository,
  DocumentRepository,
  ExtractionCacheRepository,
  KnowledgeBaseRepository,
  LlmBudgetRepository,
  LlmUsageRepository,
} from '@trellis/storage';
import { BudgetGate } from './budget/budget-gate';
import { BudgetMetrics } from './budget/budget-metrics';
import { BudgetResumer } from './budget/budget-resumer';
import { BudgetResumeSchedule } from './handlers/budget-resume-schedule';
import { ExtractionService } from './extraction.service';
import { ExtractionMetrics } from './extraction-metrics';
import { ExtractorRegistry } from './extractor-registry';
import { chunkEventsConsumer } from './handlers/chunk-events.consumer';

@Module({
  providers: [
    {
      provide: BudgetGate,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, llmUsage: LlmUsageRepository, metrics: TrellisMetrics) =>
        new BudgetGate({ knowledgeBases, llmUsage }, new BudgetMetrics(metrics)),
      inject: [KNOWLEDGE_BASE_REPOSITORY, LLM_USAGE_REPOSITORY, METRICS],
    },
    {
      provide: ExtractionService,
      // With a language model configured each knowledge base extracts with its own model and
      // prompt; otherwise the local NLP extractor does.
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        chunks: ChunkRepository,
        extractionCache: ExtractionCacheRepository,
        llmUsage: LlmUsageRepository,
        budgetPauses: BudgetPauseRepository,
        outbox: EventOutbox,
        registry: ExtractorRegistry,
        prices: LlmPriceTable,
        metrics: TrellisMetrics,
        gate: BudgetGate,
      ) =>
        new ExtractionService(
          { knowledgeBases, documents, chunks, extractionCache, llmUsage, budgetPauses },
          outbox,
          registry,
          prices,
          new ExtractionMetrics(metrics),
          gate,
        ),
      inject: [
        KNOWLEDGE_BASE_REPOSITORY,
        DOCUMENT_REPOSITORY,
        CHUNK_REPOSITORY,
        EXTRACTION_CACHE_REPOSITORY,
        LLM_USAGE_REPOSITORY,
        BUDGET_PAUSE_REPOSITORY,
        EVENT_OUTBOX,
        ExtractorRegistry,
        LLM_PRICES,
        METRICS,
        BudgetGate,
      ],
    },
    {
      // Extraction pauses chunks for a budget, so it resumes them.
      provide: BudgetResumeSchedule,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        llmUsage: LlmUsageRepository,
        budgetPauses: BudgetPauseRepository,
        llmBudget: LlmBudgetRepository,
        outbox: EventOutbox,
        gate: BudgetGate,
        metrics: TrellisMetrics,
        config: TrellisConfig,
        logger: Logger,
      ) => {
        const resumer = new BudgetResumer({ knowledgeBases, llmUsage, budgetPauses, llmBudget }, outbox, gate, new BudgetMetrics(metrics));
        const log = logger.child({ component: 'budget-resumer' });
        return new BudgetResumeSchedule(resumer, config.llmCost.budgetResumeIntervalMs, (error) =>
          log.warn({ err: error instanceof Error ? error.message : String(error) }, 'resuming budget-paused extraction failed; the next interval tries again'),
        );
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, LLM_USAGE_REPOSITORY, BUDGET_PAUSE_REPOSITORY, LLM_BUDGET_REPOSITORY, EVENT_OUTBOX, BudgetGate, METRICS, CONFIG, LOGGER],
    },
    { provide: ExtractorRegistry, useFactory: (models: Models) => new ExtractorRegistry(models), inject: [MODELS] },
    chunkEventsConsumer,
  ],
  exports: [BudgetResumeSchedule],
})
export class ExtractionModule implements OnModuleDestroy {
  constructor(
    @Inject(BudgetResumeSchedule) private readonly resumer: BudgetResumeSchedule,
    @Inject(ExtractorRegistry) private readonly extractors: ExtractorRegistry,
  ) {}

  /**
   * The resumer is started by the process once its bus runs (main.ts, standalone), and stopped
   * here; the local extractor's threads end with the module.
   */
  async onModuleDestroy(): Promise<void> {
    await this.resumer.stop();
    await this.extractors.close();
  }
}
