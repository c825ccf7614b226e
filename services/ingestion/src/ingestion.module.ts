import { Module } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import type { EventBus } from '@trellis/messaging';
import { EVENT_BUS } from '@trellis/messaging';
import { CONFIG } from '@trellis/platform';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { DocumentIngestionService } from './document-ingestion.service';
import { KnowledgeBaseController } from './handlers/knowledge-base.controller';
import { KnowledgeBaseService } from './knowledge-base.service';

@Module({
  controllers: [KnowledgeBaseController],
  providers: [
    { provide: KnowledgeBaseService, useFactory: (store: TrellisStore) => new KnowledgeBaseService(store), inject: [STORE] },
    {
      provide: DocumentIngestionService,
      useFactory: (store: TrellisStore, bus: EventBus, config: TrellisConfig) => new DocumentIngestionService(store, bus, config),
      inject: [STORE, EVENT_BUS, CONFIG],
    },
  ],
  exports: [KnowledgeBaseService, DocumentIngestionService],
})
export class IngestionModule {}
