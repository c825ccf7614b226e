import type { KbScope, KbSettings, TenantScope } from '@trellis/contracts';
import type { KnowledgeBaseRecord } from '../records';

/** Knowledge bases of a tenant: names, descriptions and settings. */
export interface KnowledgeBaseRepository {
  /** Throws ALREADY_EXISTS when the tenant has a knowledge base of that name. */
  createKnowledgeBase(
    scope: TenantScope,
    input: { name: string; description: string; settings: KbSettings },
  ): Promise<KnowledgeBaseRecord>;
  listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]>;
  /** By id or by name. */
  findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null>;
  /** Replaces description and settings; null when the knowledge base does not exist. */
  updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null>;
  /**
   * Deletes the knowledge base and every row that belongs to it: documents, chunks, graph,
   * edits, usage, chats and the extraction-cache entries it wrote or reused.
   */
  deleteKnowledgeBase(scope: KbScope): Promise<boolean>;
}
