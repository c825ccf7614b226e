import { ErrorCode, TrellisError, stableId } from '@trellis/contracts';
import type { KbScope, KbSettings, TenantScope } from '@trellis/contracts';
import type { KnowledgeBaseRecord } from '../records';
import type { KnowledgeBaseRepository } from '../repositories/knowledge-base.repository';
import { toKnowledgeBase } from '../row-mappers';
import { GRAPH_EDIT_TABLES } from './graph-edit-session';
import { SqlRepository } from './sql-engine';

/** Every table with rows of a knowledge base, dependents first (the full-text index's own tables aside). */
const KB_TABLES = [
  'entity_mentions', 'relationship_mentions', 'relationships', 'entity_name_terms', 'entities', 'chunks', 'document_texts', 'document_stages', 'documents',
  'chat_messages', 'chats', 'llm_usage', 'extraction_cache', ...GRAPH_EDIT_TABLES, 'communities', 'community_members', 'community_state',
  'community_changes', 'llm_spend', 'llm_paused_chunks',
] as const;

/** Knowledge bases of a tenant: names unique per tenant, ids derived from them. */
export class SqlKnowledgeBases extends SqlRepository implements KnowledgeBaseRepository {
  async createKnowledgeBase(scope: TenantScope, input: { name: string; description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord> {
    const id = stableId('kb', scope.tenantId, input.name);
    const createdAt = new Date().toISOString();
    try {
      await this.db.exec('INSERT INTO knowledge_bases (tenant_id, id, name, description, settings, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
        scope.tenantId,
        id,
        input.name,
        input.description,
        JSON.stringify(input.settings),
        this.dialect.time(createdAt),
      ]);
    } catch (error) {
      if (this.dialect.isDuplicateKey(error)) throw new TrellisError(ErrorCode.AlreadyExists, `knowledge base "${input.name}" already exists`);
      throw error;
    }
    return { id, tenantId: scope.tenantId, name: input.name, description: input.description, settings: input.settings, createdAt };
  }

  async listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]> {
    return (await this.db.rows('SELECT * FROM knowledge_bases WHERE tenant_id = ? ORDER BY name', [scope.tenantId])).map(toKnowledgeBase);
  }

  /** By id or by name; an id wins over another knowledge base's equal name. */
  async findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null> {
    const [row] = await this.db.rows('SELECT * FROM knowledge_bases WHERE tenant_id = ? AND (id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1', [
      scope.tenantId,
      idOrName,
      idOrName,
      idOrName,
    ]);
    return row ? toKnowledgeBase(row) : null;
  }

  async updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null> {
    await this.db.exec('UPDATE knowledge_bases SET description = ?, settings = ? WHERE tenant_id = ? AND id = ?', [
      changes.description,
      JSON.stringify(changes.settings),
      scope.tenantId,
      scope.kbId,
    ]);
    return this.findKnowledgeBase(scope, scope.kbId);
  }

  deleteKnowledgeBase(scope: KbScope): Promise<boolean> {
    return this.changing(scope, ['chunks', 'entities', 'relationships'], () =>
      this.db.transaction(async (tx) => {
        await this.engine.fullText.removeKnowledgeBase(tx, scope);
        for (const table of KB_TABLES) await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ?`, [scope.tenantId, scope.kbId]);
        return (await tx.exec('DELETE FROM knowledge_bases WHERE tenant_id = ? AND id = ?', [scope.tenantId, scope.kbId])) > 0;
      }),
    );
  }
}
