import { TrellisError } from '@trellis/contracts';
import type { KbScope, TenantScope } from '@trellis/contracts';
import type { KnowledgeBaseRecord } from './records';
import type { KnowledgeBaseRepository } from './repositories/knowledge-base.repository';

/** The knowledge base named by id or name, or NOT_FOUND. */
export async function requireKnowledgeBase(knowledgeBases: Pick<KnowledgeBaseRepository, 'findKnowledgeBase'>, scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord> {
  if (idOrName.trim() === '') throw TrellisError.invalid('knowledge_base is required');
  const kb = await knowledgeBases.findKnowledgeBase(scope, idOrName);
  if (kb === null) throw TrellisError.notFound(`knowledge base "${idOrName}" not found`);
  return kb;
}

export function kbScope(kb: KnowledgeBaseRecord): KbScope {
  return { tenantId: kb.tenantId, kbId: kb.id };
}
