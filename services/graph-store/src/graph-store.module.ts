import { Logger, Module } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import { MODELS } from '@trellis/models';
import type { Models, TokenUsage } from '@trellis/models';
import { LLM_PRICES, estimateCost } from '@trellis/observability';
import type { LlmPriceTable } from '@trellis/observability';
import { CONFIG, createSummaryRefresher } from '@trellis/runtime';
import { CoalescingSummaryRefresher } from '@trellis/graph';
import {
  CHUNK_REPOSITORY,
  DOCUMENT_REPOSITORY,
  EXTRACTION_CACHE_REPOSITORY,
  GRAPH_EDIT_REPOSITORY,
  GRAPH_READ_REPOSITORY,
  GRAPH_SUMMARY_REPOSITORY,
  GRAPH_WRITE_REPOSITORY,
  KNOWLEDGE_BASE_REPOSITORY,
  LLM_USAGE_REPOSITORY,
} from '@trellis/storage';
import type {
  ChunkRepository,
  DocumentRepository,
  ExtractionCacheRepository,
  GraphEditRepository,
  GraphReadRepository,
  GraphSummaryRepository,
  GraphWriteRepository,
  KnowledgeBaseRepository,
  LlmUsageRepository,
} from '@trellis/storage';
import { EntityResolver } from './entity-resolver';
import { GraphQueryService } from './graph-query.service';
import { GraphWriterService } from './graph-writer.service';
import { GraphEditService } from './graph-edit.service';
import { extractionEventsConsumer } from './handlers/extraction-events.consumer';
import { GraphController } from './handlers/graph.controller';

@Module({
  controllers: [GraphController],
  providers: [
    {
      provide: GraphWriterService,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        chunks: ChunkRepository,
        extractionCache: ExtractionCacheRepository,
        graphWrites: GraphWriteRepository,
        graphSummaries: GraphSummaryRepository,
        llmUsage: LlmUsageRepository,
        models: Models,
        config: TrellisConfig,
        prices: LlmPriceTable,
      ) => {
        const logger = new Logger('GraphWriter');
        const resolver = new EntityResolver(models.llm, (error) => logger.warn(`LLM merge decision failed, entities kept apart: ${error.message}`));
        const costOf = (usage: TokenUsage) => (models.llm === null ? 0 : estimateCost(prices, models.llm.model, usage.inputTokens, usage.outputTokens));
        const summaries = new CoalescingSummaryRefresher(createSummaryRefresher(graphSummaries, models, (message) => logger.warn(message)));
        const repos = { knowledgeBases, documents, chunks, extractionCache, graphWrites, graphSummaries, llmUsage };
        return new GraphWriterService(repos, models.embedder, resolver, summaries, config.resolution, models.llm !== null, costOf);
      },
      inject: [
        KNOWLEDGE_BASE_REPOSITORY,
        DOCUMENT_REPOSITORY,
        CHUNK_REPOSITORY,
        EXTRACTION_CACHE_REPOSITORY,
        GRAPH_WRITE_REPOSITORY,
        GRAPH_SUMMARY_REPOSITORY,
        LLM_USAGE_REPOSITORY,
        MODELS,
        CONFIG,
        LLM_PRICES,
      ],
    },
    {
      provide: GraphQueryService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, graphReads: GraphReadRepository) => new GraphQueryService({ knowledgeBases, graphReads }),
      inject: [KNOWLEDGE_BASE_REPOSITORY, GRAPH_READ_REPOSITORY],
    },
    {
      provide: GraphEditService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, graphReads: GraphReadRepository, graphEdits: GraphEditRepository, models: Models) =>
        new GraphEditService({ knowledgeBases, graphReads, graphEdits }, models.embedder),
      inject: [KNOWLEDGE_BASE_REPOSITORY, GRAPH_READ_REPOSITORY, GRAPH_EDIT_REPOSITORY, MODELS],
    },
    extractionEventsConsumer,
  ],
})
export class GraphStoreModule {}
