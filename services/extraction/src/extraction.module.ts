import { Inject, Module } from '@nestjs/common';
import type { OnModuleDestroy } from '@nestjs/common';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { LLM_PRICES, METRICS } from '@trellis/observability';
import type { LlmPriceTable, TrellisMetrics } from '@trellis/observability';
import { CHUNK_REPOSITORY, DOCUMENT_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, LLM_USAGE_REPOSITORY } from '@trellis/storage';
import type { ChunkRepository, DocumentRepository, ExtractionCacheRepository, KnowledgeBaseRepository, LlmUsageRepository } from '@trellis/storage';
import { ExtractionService } from './extraction.service';
import { ExtractionMetrics } from './extraction-metrics';
import { ExtractorRegistry } from './extractor-registry';
import { chunkEventsConsumer } from './handlers/chunk-events.consumer';

@Module({
  providers: [
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
        bus: EventBus,
        registry: ExtractorRegistry,
        prices: LlmPriceTable,
        metrics: TrellisMetrics,
      ) =>
        new ExtractionService(
          { knowledgeBases, documents, chunks, extractionCache, llmUsage },
          bus,
          registry,
          prices,
          new ExtractionMetrics(metrics),
        ),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, CHUNK_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, LLM_USAGE_REPOSITORY, EVENT_BUS, ExtractorRegistry, LLM_PRICES, METRICS],
    },
    { provide: ExtractorRegistry, useFactory: (models: Models) => new ExtractorRegistry(models), inject: [MODELS] },
    chunkEventsConsumer,
  ],
})
export class ExtractionModule implements OnModuleDestroy {
  constructor(@Inject(ExtractorRegistry) private readonly extractors: ExtractorRegistry) {}

  /** The local extractor's threads end with the module. */
  onModuleDestroy(): Promise<void> {
    return this.extractors.close();
  }
}
