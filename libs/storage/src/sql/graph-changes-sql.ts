import type { KbScope } from '@trellis/contracts';
import { GraphEditor } from '@trellis/graph';
import type { EntityMentionWrite, EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, PendingSummary, RelationshipMentionWrite, RelationshipPatch, SummaryUpdate } from '@trellis/graph';
import type { EntityCandidate, EntityRecord, RelationshipRecord } from '../records';
import { toGraphEdit } from '../graph-edit-rows';
import { GraphEditSession } from './graph-edit-session';
import type { SqlGraphReads } from './graph-read-sql';
import { writeChunkExtraction } from './graph-write-sql';
import type { SqlEngine } from './sql-engine';
import type { SqlDatabase } from './sql-session';
import * as summaries from './summary-sql';

/** Changes to the graph: chunk extractions, recomputed summaries and manual edits, each in its own transaction. */
export class SqlGraphChanges {
  constructor(
    private readonly db: SqlDatabase,
    private readonly engine: SqlEngine,
    private readonly reads: SqlGraphReads,
  ) {}

  applyChunkExtraction(scope: KbScope, chunkId: string, entities: readonly EntityMentionWrite[], relationships: readonly RelationshipMentionWrite[]): Promise<void> {
    return this.changeGraph(scope, async () => {
      await this.db.transaction((tx) => writeChunkExtraction(tx, this.engine.dialect, scope, chunkId, entities, relationships));
    });
  }

  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    return summaries.listEntityCandidates(this.db, this.engine.dialect, scope, normalizedNames);
  }

  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]> {
    return summaries.listPendingSummaries(this.db, scope, limit);
  }

  listScopesWithPendingSummaries(): Promise<KbScope[]> {
    return summaries.listScopesWithPendingSummaries(this.db);
  }

  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
    return this.changeGraph(scope, () => summaries.saveSummaries(this.db, this.engine.dialect, scope, updates));
  }

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
    const [row] = await this.db.rows(`SELECT * FROM graph_edits WHERE ${this.engine.dialect.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, editId]);
    return row ? toGraphEdit(row) : null;
  }

  async listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    const top = Math.max(0, Math.floor(limit));
    const rows = await this.db.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ${top}`, [scope.tenantId, scope.kbId]);
    return rows.map(toGraphEdit);
  }

  /** One edit: @trellis/graph's GraphEditor over the rows of one transaction. */
  private edit<T>(scope: KbScope, work: (editor: GraphEditor) => Promise<T>): Promise<T> {
    return this.changeGraph(scope, () => this.db.transaction((tx) => work(new GraphEditor(new GraphEditSession(tx, this.engine.dialect, scope)))));
  }

  /** Runs a write of entities and relationships; afterwards their per-process vector matrices are stale. */
  private async changeGraph<T>(scope: KbScope, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.engine.vectors.changed(scope.kbId, 'entities', 'relationships');
    }
  }
}
