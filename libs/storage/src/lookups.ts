import { TrellisError, fromEventSettings } from '@trellis/contracts';
import type { KbScope, KnowledgeBaseSnapshot, TenantScope, events } from '@trellis/contracts';
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

/**
 * The knowledge base an indexing event is about: the settings it carries, or, for an event from
 * before they travelled, the store's record (null when the knowledge base is gone).
 */
export async function knowledgeBaseOfEvent(
  context: events.EventContext,
  knowledgeBases: Pick<KnowledgeBaseRepository, 'findKnowledgeBase'>,
): Promise<KnowledgeBaseSnapshot | null> {
  if (context.knowledgeBase) return fromEventSettings(context.knowledgeBase);
  return knowledgeBases.findKnowledgeBase({ tenantId: context.tenantId }, context.knowledgeBaseId);
}
