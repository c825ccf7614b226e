import { Logger, Module } from '@nestjs/common';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import type { TrellisConfig } from '@trellis/config';
import type { EventBus } from '@trellis/messaging';
import { EVENT_BUS } from '@trellis/messaging';
import { CONFIG, createSummaryRefresher } from '@trellis/platform';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { DocumentIngestionService } from './document-ingestion.service';
import { DocumentReindexService } from './document-reindex.service';
import { KnowledgeBaseController } from './handlers/knowledge-base.controller';
import { KnowledgeBaseService } from './knowledge-base.service';

@Module({
  controllers: [KnowledgeBaseController],
  providers: [
    {
      provide: KnowledgeBaseService,
      useFactory: (store: TrellisStore, models: Models, config: TrellisConfig) => {
        const logger = new Logger('KnowledgeBases');
        return new KnowledgeBaseService(store, createSummaryRefresher(store, models, (message) => logger.warn(message)), config.resolution.summaryMaxChars);
      },
      inject: [STORE, MODELS, CONFIG],
    },
    {
      provide: DocumentIngestionService,
      useFactory: (store: TrellisStore, bus: EventBus, config: TrellisConfig) => new DocumentIngestionService(store, bus, config),
      inject: [STORE, EVENT_BUS, CONFIG],
    },
    {
      provide: DocumentReindexService,
      useFactory: (store: TrellisStore, ingestion: DocumentIngestionService) => new DocumentReindexService(store, ingestion),
      inject: [STORE, DocumentIngestionService],
    },
  ],
  exports: [KnowledgeBaseService, DocumentIngestionService, DocumentReindexService],
})
export class IngestionModule {}
