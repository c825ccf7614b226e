import { Logger, Module } from '@nestjs/common';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import type { TrellisConfig } from '@trellis/config';
import type { EventBus } from '@trellis/messaging';
import { EVENT_BUS } from '@trellis/messaging';
import { CONFIG, createSummaryRefresher } from '@trellis/runtime';
import { CHUNK_REPOSITORY, DOCUMENT_REPOSITORY, GRAPH_SUMMARY_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, LLM_USAGE_REPOSITORY } from '@trellis/storage';
import type { ChunkRepository, DocumentRepository, GraphSummaryRepository, KnowledgeBaseRepository, LlmUsageRepository } from '@trellis/storage';
import { DocumentIngestionService } from './document-ingestion.service';
import { DocumentReindexService } from './document-reindex.service';
import { KnowledgeBaseController } from './handlers/knowledge-base.controller';
import { KnowledgeBaseService } from './knowledge-base.service';

@Module({
  controllers: [KnowledgeBaseController],
  providers: [
    {
      provide: KnowledgeBaseService,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        chunks: ChunkRepository,
        llmUsage: LlmUsageRepository,
        graphSummaries: GraphSummaryRepository,
        models: Models,
        config: TrellisConfig,
      ) => {
        const logger = new Logger('KnowledgeBases');
        const summaries = createSummaryRefresher(graphSummaries, models, (message) => logger.warn(message));
        return new KnowledgeBaseService({ knowledgeBases, documents, chunks, llmUsage }, summaries, config.resolution.summaryMaxChars, models.embedderInfo);
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, CHUNK_REPOSITORY, LLM_USAGE_REPOSITORY, GRAPH_SUMMARY_REPOSITORY, MODELS, CONFIG],
    },
    {
      provide: DocumentIngestionService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, bus: EventBus, config: TrellisConfig, models: Models) =>
        new DocumentIngestionService({ knowledgeBases, documents }, bus, config, models.embedder),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, EVENT_BUS, CONFIG, MODELS],
    },
    {
      provide: DocumentReindexService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, ingestion: DocumentIngestionService, models: Models) =>
        new DocumentReindexService({ knowledgeBases, documents }, ingestion, models.embedder),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, DocumentIngestionService, MODELS],
    },
  ],
  exports: [KnowledgeBaseService, DocumentIngestionService, DocumentReindexService],
})
export class IngestionModule {}
