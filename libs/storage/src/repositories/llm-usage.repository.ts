import type { KbScope } from '@trellis/contracts';
import type { LlmUsage } from '../records';

/**
 * What indexing cost in LLM calls, tokens and money, per document version. Usage rows are
 * accounting, not content: they stay when the document is deleted (the money was spent) and
 * go with the knowledge base.
 */
export interface LlmUsageRepository {
  /** Adds to what indexing a document version cost. */
  addLlmUsage(scope: KbScope, documentId: string, version: number, usage: LlmUsage): Promise<void>;
  /** Usage of one document version; zeros when none was recorded. */
  getDocumentLlmUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage>;
  /** Usage summed over every document and version of the knowledge base. */
  getKnowledgeBaseLlmUsage(scope: KbScope): Promise<LlmUsage>;
}
