import { Module } from '@nestjs/common';
import type { DynamicModule, ModuleMetadata, Provider } from '@nestjs/common';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { CHAT_REPOSITORY } from '@trellis/storage';
import type { ChatRepository } from '@trellis/storage';
import { ExtractiveAnswerComposer, LlmAnswerComposer } from './answer-composer';
import { ChatEngine } from './chat-engine';
import { ExtractiveOverviewComposer, MapReduceAnswerComposer } from './global-answer-composer';
import { ChatController } from './handlers/chat.controller';
import { relevanceFloorFor } from './relevance-floor';
import type { RetrievalPort } from './retrieval-port';

export const RETRIEVAL_PORT = Symbol.for('trellis.retrieval-port');

@Module({})
export class ChatModule {
  /**
   * The composition root says where retrieval comes from: the in-process retrieval service
   * (standalone) or a gRPC client of it (distributed).
   */
  static register(options: { imports?: ModuleMetadata['imports']; retrievalPort: Omit<Provider & { provide: typeof RETRIEVAL_PORT }, 'provide'> }): DynamicModule {
    return {
      module: ChatModule,
      imports: options.imports ?? [],
      controllers: [ChatController],
      providers: [
        { ...(options.retrievalPort as object), provide: RETRIEVAL_PORT } as Provider,
        {
          provide: ChatEngine,
          useFactory: (chats: ChatRepository, retrieval: RetrievalPort, models: Models) => {
            const floor = relevanceFloorFor(models.embedder.model);
            return models.llm
              ? new ChatEngine({ chats }, retrieval, 'model', new LlmAnswerComposer(models.llm), new MapReduceAnswerComposer(models.llm), floor)
              : new ChatEngine({ chats }, retrieval, 'entities', new ExtractiveAnswerComposer(models.embedder), new ExtractiveOverviewComposer(), floor);
          },
          inject: [CHAT_REPOSITORY, RETRIEVAL_PORT, MODELS],
        },
      ],
    };
  }
}
