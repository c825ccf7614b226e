import type { TrellisRepositories } from '@trellis/storage';

/** Injection tokens of the repositories in Nest modules, one per repository. */
export const KNOWLEDGE_BASE_REPOSITORY = Symbol.for('trellis.repository.knowledge-bases');
export const DOCUMENT_REPOSITORY = Symbol.for('trellis.repository.documents');
export const CHUNK_REPOSITORY = Symbol.for('trellis.repository.chunks');
export const EXTRACTION_CACHE_REPOSITORY = Symbol.for('trellis.repository.extraction-cache');
export const GRAPH_WRITE_REPOSITORY = Symbol.for('trellis.repository.graph-writes');
export const GRAPH_SUMMARY_REPOSITORY = Symbol.for('trellis.repository.graph-summaries');
export const GRAPH_READ_REPOSITORY = Symbol.for('trellis.repository.graph-reads');
export const GRAPH_EDIT_REPOSITORY = Symbol.for('trellis.repository.graph-edits');
export const LLM_USAGE_REPOSITORY = Symbol.for('trellis.repository.llm-usage');
export const LLM_BUDGET_REPOSITORY = Symbol.for('trellis.repository.llm-budget');
export const BUDGET_PAUSE_REPOSITORY = Symbol.for('trellis.repository.budget-pauses');
export const CHAT_REPOSITORY = Symbol.for('trellis.repository.chats');
export const CHAT_ENGINE_REPOSITORY = Symbol.for('trellis.repository.chat-engines');
export const COMMUNITY_REPOSITORY = Symbol.for('trellis.repository.communities');
export const OUTBOX_REPOSITORY = Symbol.for('trellis.repository.outbox');

/** The token of each repository, so the platform can provide them all from one store. */
export const REPOSITORY_TOKENS: Readonly<Record<keyof TrellisRepositories, symbol>> = {
  knowledgeBases: KNOWLEDGE_BASE_REPOSITORY,
  documents: DOCUMENT_REPOSITORY,
  chunks: CHUNK_REPOSITORY,
  extractionCache: EXTRACTION_CACHE_REPOSITORY,
  graphWrites: GRAPH_WRITE_REPOSITORY,
  graphSummaries: GRAPH_SUMMARY_REPOSITORY,
  graphReads: GRAPH_READ_REPOSITORY,
  graphEdits: GRAPH_EDIT_REPOSITORY,
  llmUsage: LLM_USAGE_REPOSITORY,
  llmBudget: LLM_BUDGET_REPOSITORY,
  budgetPauses: BUDGET_PAUSE_REPOSITORY,
  chats: CHAT_REPOSITORY,
  chatEngines: CHAT_ENGINE_REPOSITORY,
  communities: COMMUNITY_REPOSITORY,
  outbox: OUTBOX_REPOSITORY,
};
