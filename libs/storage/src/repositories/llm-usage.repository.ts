import type { KbScope } from '@trellis/contracts';
import type { LlmPurpose, LlmSpend, LlmUsage } from '../records';

/**
 * What indexing cost in LLM calls, tokens and money, per document version. Usage rows are
 * accounting, not content: they stay when the document is deleted (the money was spent) and
 * go with the knowledge base.
 */
export interface LlmUsageRepository {
  /**
   * Adds to what indexing a document version cost, and (when it made calls) to the knowledge
   * base's spend for `purpose` on the UTC day of `at` (default now), in one transaction.
   * `countedInputTokens`, when given, is the calls' input as Trellis counts prompts.
   */
  addLlmUsage(scope: KbScope, documentId: string, version: number, usage: LlmUsage & { countedInputTokens?: number }, purpose: LlmPurpose, at?: Date): Promise<void>;
  /** Usage of one document version; zeros when none was recorded. */
  getDocumentLlmUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage>;
  /** Usage summed over every document and version of the knowledge base. */
  getKnowledgeBaseLlmUsage(scope: KbScope): Promise<LlmUsage>;
  /** The knowledge base's spend per purpose on the UTC days from `fromDay` (YYYY-MM-DD) on. */
  getLlmSpend(scope: KbScope, fromDay: string): Promise<Record<LlmPurpose, LlmSpend>>;
}
