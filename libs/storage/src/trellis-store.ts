import type { ChatRepository } from './repositories/chat.repository';
import type { ChatEngineRepository } from './repositories/chat-engine.repository';
import type { ChunkRepository } from './repositories/chunk.repository';
import type { CommunityRepository } from './repositories/community.repository';
import type { DocumentRepository } from './repositories/document.repository';
import type { ExtractionCacheRepository } from './repositories/extraction-cache.repository';
import type { GraphEditRepository } from './repositories/graph-edit.repository';
import type { GraphReadRepository } from './repositories/graph-read.repository';
import type { GraphSummaryRepository } from './repositories/graph-summary.repository';
import type { GraphWriteRepository } from './repositories/graph-write.repository';
import type { KnowledgeBaseRepository } from './repositories/knowledge-base.repository';
import type { LlmBudgetRepository } from './repositories/llm-budget.repository';
import type { LlmUsageRepository } from './repositories/llm-usage.repository';
import type { BudgetPauseRepository } from './repositories/budget-pause.repository';
import type { OutboxRepository } from './repositories/outbox.repository';
import type { StoreConnection } from './repositories/store-connection';

/**
 * The repositories of Trellis by name: what the runtime hands out, one injection token each
 * (@trellis/runtime's repository-tokens.ts). A service or domain class takes the `Pick` of the
 * ones it uses.
 */
export interface TrellisRepositories {
  readonly knowledgeBases: KnowledgeBaseRepository;
  readonly documents: DocumentRepository;
  readonly chunks: ChunkRepository;
  readonly extractionCache: ExtractionCacheRepository;
  readonly graphWrites: GraphWriteRepository;
  readonly graphSummaries: GraphSummaryRepository;
  readonly graphReads: GraphReadRepository;
  readonly graphEdits: GraphEditRepository;
  readonly llmUsage: LlmUsageRepository;
  readonly llmBudget: LlmBudgetRepository;
  readonly budgetPauses: BudgetPauseRepository;
  readonly chats: ChatRepository;
  readonly chatEngines: ChatEngineRepository;
  readonly communities: CommunityRepository;
  readonly outbox: OutboxRepository;
}

/**
 * What each storage adapter (SQLite for standalone, TiDB/MySQL for distributed) opens: every
 * repository over one connection, passing the same contract tests, and the connection itself.
 * Every repository method is scoped by tenant (the LLM call budget and the outbox are
 * deployment-wide by design), and every write is idempotent: repeating it with the same
 * arguments leaves the same rows. Only composition roots and the adapters' own tests see this
 * type; everything else receives repositories.
 */
export interface TrellisStore extends StoreConnection {
  readonly repositories: TrellisRepositories;
}
