import { Module } from '@nestjs/common';
import type { DynamicModule, ModuleMetadata, Provider } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { CHAT_ENGINE_REPOSITORY, CHAT_REPOSITORY, CONFIG, KNOWLEDGE_BASE_REPOSITORY } from '@trellis/runtime';
import type { ChatEngineRepository, ChatRepository, KnowledgeBaseRepository } from '@trellis/storage';
import { ExtractiveAnswerComposer, LlmAnswerComposer } from './answer-composer';
import { ChatEngine } from './chat-engine';
import { Conversations } from './conversation/conversations';
import { ModelQuestionCondenser } from './conversation/model-condenser';
import { RuleQuestionCondenser } from './conversation/rule-condenser';
import { ChatEngineCatalog } from './engines/chat-engine-catalog';
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
          provide: Conversations,
          useFactory: (chats: ChatRepository, knowledgeBases: KnowledgeBaseRepository, config: TrellisConfig) =>
            new Conversations({ chats, knowledgeBases }, { turns: config.chat.historyTurns, chars: config.chat.historyChars }),
          inject: [CHAT_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, CONFIG],
        },
        {
          provide: ChatEngineCatalog,
          useFactory: (chatEngines: ChatEngineRepository, knowledgeBases: KnowledgeBaseRepository) => new ChatEngineCatalog({ chatEngines, knowledgeBases }),
          inject: [CHAT_ENGINE_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY],
        },
        {
          provide: ChatEngine,
          useFactory: (chats: ChatRepository, retrieval: RetrievalPort, models: Models, conversations: Conversations, engines: ChatEngineCatalog, config: TrellisConfig) => {
            const floor = relevanceFloorFor(models.embedder.model);
            const rules = new RuleQuestionCondenser();
            if (!models.llm) {
              const support = { conversations, condenser: rules, engines };
              return new ChatEngine({ chats }, retrieval, 'entities', new ExtractiveAnswerComposer(models.embedder), new ExtractiveOverviewComposer(), floor, support);
            }
            const support = { conversations, condenser: new ModelQuestionCondenser(models.llm, rules, config.chat.condenseTimeoutMs), engines };
            return new ChatEngine({ chats }, retrieval, 'model', new LlmAnswerComposer(models.llm), new MapReduceAnswerComposer(models.llm), floor, support);
          },
          inject: [CHAT_REPOSITORY, RETRIEVAL_PORT, MODELS, Conversations, ChatEngineCatalog, CONFIG],
        },
      ],
    };
  }
}
