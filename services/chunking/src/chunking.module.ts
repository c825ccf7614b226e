import { Module } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import { EVENT_OUTBOX } from '@trellis/messaging';
import { CHUNK_REPOSITORY, CONFIG, DOCUMENT_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY } from '@trellis/runtime';
import type { EventOutbox } from '@trellis/messaging';
import { MODELS, loadTokenizer } from '@trellis/models';
import type { Models } from '@trellis/models';
import type { ChunkRepository, DocumentRepository, KnowledgeBaseRepository } from '@trellis/storage';
import { ChunkingService } from './chunking.service';
import { documentEventsConsumer } from './handlers/document-events.consumer';

@Module({
  providers: [
    {
      provide: ChunkingService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, chunks: ChunkRepository, outbox: EventOutbox, models: Models, config: TrellisConfig) => {
        // At start-up, not on the first document: building the tokenizer holds the loop ~0.5 s.
        loadTokenizer();
        return new ChunkingService({ knowledgeBases, documents, chunks }, outbox, models.embedder, config.parseTimeoutMs);
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, CHUNK_REPOSITORY, EVENT_OUTBOX, MODELS, CONFIG],
    },
    documentEventsConsumer,
  ],
})
export class ChunkingModule {}
