import type { KbScope } from '@trellis/contracts';
import { GraphEditor } from '@trellis/graph';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from '@trellis/graph';
import type { EntityRecord, RelationshipRecord } from '../records';
import type { GraphEditRepository } from '../repositories/graph-edit.repository';
import { toGraphEdit } from '../graph-edit-rows';
import { GraphEditSession } from './graph-edit-session';
import { SqlGraphReads } from './graph-read-sql';
import { SqlRepository } from './sql-engine';

/** Manual edits of the graph, each one transaction of @trellis/graph's GraphEditor; they resolve to the rows as retrieval reads them. */
export class SqlGraphEdits extends SqlRepository implements GraphEditRepository {
  private readonly reads = new SqlGraphReads(this.db, this.engine);

  async updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.edit(scope, (editor) => editor.updateEntity(entityId, patch, edit));
    return (await this.reads.getEntities(scope, [entityId]))[0]!;
  }

  async updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord> {
    await this.edit(scope, (editor) => editor.updateRelationship(relationshipId, patch, edit));
    return (await this.reads.getRelationships(scope, [relationshipId]))[0]!;
  }

  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void> {
    return this.edit(scope, (editor) => editor.deleteEntity(entityId, edit));
  }

  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void> {
    return this.edit(scope, (editor) => editor.deleteRelationship(relationshipId, edit));
  }

  async createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord> {
    await this.edit(scope, (editor) => editor.createManualEntity(entity, links, edit));
    return (await this.reads.getEntities(scope, [entity.id]))[0]!;
  }

  async mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.edit(scope, (editor) => editor.mergeEntities(sourceId, targetId, edit));
    return (await this.reads.getEntities(scope, [targetId]))[0]!;
  }

  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord> {
    return this.edit(scope, (editor) => editor.undo(editId, edit));
  }

  async getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null> {
    const [row] = await this.db.rows(`SELECT * FROM graph_edits WHERE ${this.dialect.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, editId]);
    return row ? toGraphEdit(row) : null;
  }

  async listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    const top = Math.max(0, Math.floor(limit));
    const rows = await this.db.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ${top}`, [scope.tenantId, scope.kbId]);
    return rows.map(toGraphEdit);
  }

  /** One edit: @trellis/graph's GraphEditor over the rows of one transaction. */
  private edit<T>(scope: KbScope, work: (editor: GraphEditor) => Promise<T>): Promise<T> {
    return this.changing(scope, ['entities', 'relationships'], () => this.db.transaction((tx) => work(new GraphEditor(new GraphEditSession(tx, this.dialect, scope)))));
  }
}
