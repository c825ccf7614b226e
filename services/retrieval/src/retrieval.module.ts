import { Module } from '@nestjs/common';
import { CHUNK_REPOSITORY, COMMUNITY_REPOSITORY, DOCUMENT_REPOSITORY, GRAPH_READ_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY } from '@trellis/runtime';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import type { ChunkRepository, CommunityRepository, DocumentRepository, GraphReadRepository, KnowledgeBaseRepository } from '@trellis/storage';
import { RetrievalController } from './handlers/retrieval.controller';
import { RetrievalService } from './retrieval.service';

@Module({
  controllers: [RetrievalController],
  providers: [
    {
      provide: RetrievalService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, documents: DocumentRepository, chunks: ChunkRepository, graphReads: GraphReadRepository, communities: CommunityRepository, models: Models) =>
        new RetrievalService({ knowledgeBases, documents, chunks, graphReads, communities }, models.embedder, { llm: models.llm, reranker: models.reranker ?? undefined }),
      inject: [KNOWLEDGE_BASE_REPOSITORY, DOCUMENT_REPOSITORY, CHUNK_REPOSITORY, GRAPH_READ_REPOSITORY, COMMUNITY_REPOSITORY, MODELS],
    },
  ],
  exports: [RetrievalService],
})
export class RetrievalModule {}
