import { Module } from '@nestjs/common';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { RetrievalController } from './handlers/retrieval.controller';
import { RetrievalService } from './retrieval.service';

@Module({
  controllers: [RetrievalController],
  providers: [
    { provide: RetrievalService, useFactory: (store: TrellisStore, models: Models) => new RetrievalService(store, models.embedder, { llm: models.llm, reranker: models.reranker ?? undefined }), inject: [STORE, MODELS] },
  ],
  exports: [RetrievalService],
})
export class RetrievalModule {}
