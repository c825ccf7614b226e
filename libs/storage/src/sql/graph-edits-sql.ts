import { encodeRowSnapshot, entityExists, selfMerge } from '@trellis/graph';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RecordedChunkExtraction, RelationshipPatch } from '@trellis/graph';
import { entitySummary, relationshipSummary, toGraphEdit } from '../graph-edit-rows';
import type { Row } from '../row-mappers';
import { GraphEditSession, emptyOverlay } from './graph-edit-session';
import { undoEdit } from './graph-undo-sql';
import { applyOverrides } from './graph-overlay-sql';
import { refreshDerived, writeChunkExtraction } from './graph-write-sql';

/**
 * Manual graph edits (the model is in @trellis/graph's graph-overlay.ts), each run inside the
 * caller's transaction: overrides, tombstones, synopses and merges, with the log an undo needs.
 */
export class SqlGraphEdits {
  constructor(private readonly s: GraphEditSession) {}

  async updateEntity(entityId: string, patch: EntityPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.s.requireEntity(entityId);
    const previous = await this.s.overlayRow('entity', entityId);
    await this.s.saveOverlay('entity', entityId, {
      ...(previous ?? emptyOverlay()),
      ...(patch.name !== undefined ? { name: patch.name, normalizedName: patch.normalizedName ?? null } : {}),
      ...(patch.type !== undefined ? { type: patch.type } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
    });
    await applyOverrides(this.s.tx, this.s.dialect, this.s.scope, { entityIds: new Set([entityId]), relationshipIds: new Set() });
    const after = await this.s.requireEntity(entityId);
    const undo = { overlay: previous, row: { name: before.name, normalizedName: before.normalized_name, type: before.type, description: before.description } };
    await this.s.logEdit(meta, 'update-entity', [entityId], entitySummary(before), entitySummary(after), undo);
  }

  async updateRelationship(relationshipId: string, patch: RelationshipPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.s.requireRelationship(relationshipId);
    const previous = await this.s.overlayRow('relationship', relationshipId);
    await this.s.saveOverlay('relationship', relationshipId, {
      ...(previous ?? emptyOverlay()),
      ...(patch.label !== undefined ? { label: patch.label } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.weight !== undefined ? { weight: patch.weight } : {}),
    });
    await applyOverrides(this.s.tx, this.s.dialect, this.s.scope, { entityIds: new Set(), relationshipIds: new Set([relationshipId]) });
    const after = await this.s.requireRelationship(relationshipId);
    const undo = { overlay: previous, row: { label: before.label, description: before.description, weight: Number(before.weight) } };
    await this.s.logEdit(meta, 'update-relationship', [relationshipId], relationshipSummary(before), relationshipSummary(after), undo);
  }

  async deleteEntity(entityId: string, meta: GraphEditMeta): Promise<void> {
    const entity = await this.s.requireEntity(entityId);
    const relationships = await this.s.relationshipRowsTouching(entityId);
    const snapshot = await this.s.recordChunks(meta.id, [entityId], relationships, [entity]);
    await this.s.tombstone('entity', entityId, meta.id);
    await this.s.removeFacts([entityId], relationships.map((r) => String(r.id)));
    await this.s.logEdit(meta, 'delete-entity', [entityId], { ...entitySummary(entity), relationships: relationships.length }, null, { rows: snapshot });
  }

  async deleteRelationship(relationshipId: string, meta: GraphEditMeta): Promise<void> {
    const relationship = await this.s.requireRelationship(relationshipId);
    const snapshot = await this.s.recordChunks(meta.id, [], [relationship], []);
    await this.s.tombstone('relationship', relationshipId, meta.id);
    await this.s.removeFacts([], [relationshipId]);
    await this.s.logEdit(meta, 'delete-relationship', [relationshipId], relationshipSummary(relationship), null, { rows: snapshot });
  }

  async createManualEntity(entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], meta: GraphEditMeta): Promise<void> {
    const { tx, dialect, key } = this.s;
    if ((await this.s.entityRow(entity.id)) !== undefined) throw entityExists(entity.id);
    for (const link of links) for (const end of [link.sourceId, link.targetId]) if (end !== entity.id) await this.s.requireEntity(end);
    await tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?)`,
      [...key, entity.id, entity.name, entity.normalizedName, entity.type, entity.description, dialect.embeddingValue(entity.embedding)],
    );
    for (const l of links) {
      await tx.exec(
        `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, kind, embedding)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?) ${dialect.onConflictKeep('mention_count')}`,
        [...key, l.id, l.sourceId, l.targetId, l.label, l.description, l.weight, dialect.embeddingValue(l.embedding)],
      );
    }
    const after = { ...entitySummary(await this.s.requireEntity(entity.id)), links: links.map((l) => l.targetId) };
    await this.s.logEdit(meta, 'create-synopsis', [entity.id, ...links.map((l) => l.targetId)], null, after, { entityId: entity.id });
  }

  async mergeEntities(sourceId: string, targetId: string, meta: GraphEditMeta): Promise<void> {
    if (sourceId === targetId) throw selfMerge();
    await this.s.lockEntities([sourceId, targetId].sort());
    const source = await this.s.requireEntity(sourceId);
    const target = await this.s.requireEntity(targetId);
    const relationships = await this.s.relationshipRowsTouching(sourceId);
    const chunkIds = await this.s.chunksOf([sourceId], relationships.map((r) => String(r.id)));
    const recorded: Array<[string, RecordedChunkExtraction]> = [];
    for (const chunkId of chunkIds) recorded.push([chunkId, await this.s.reconstruct(chunkId)]);
    const snapshot = encodeRowSnapshot(this.s.toSnapshot([source], relationships));
    await this.s.tx.exec('INSERT INTO graph_merges (tenant_id, kb_id, id, source_id, target_id, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      ...this.s.key,
      meta.id,
      sourceId,
      targetId,
      this.s.dialect.time(meta.at),
    ]);
    // Clear what the source holds, then replay its chunks: with the merge active, the overlay
    // sends every mention to the target (and records the chunk for undo).
    await this.repointManual(relationships.filter((r) => r.kind === 'manual'), sourceId, targetId);
    await this.s.removeFacts([sourceId], relationships.filter((r) => r.kind !== 'manual').map((r) => String(r.id)));
    for (const [chunkId, x] of recorded) await writeChunkExtraction(this.s.tx, this.s.dialect, this.s.scope, chunkId, x.entities, x.relationships, true);
    await refreshDerived(this.s.tx, this.s.dialect, this.s.scope, { entityIds: new Set([targetId]), relationshipIds: new Set() });
    const after = entitySummary(await this.s.requireEntity(targetId));
    await this.s.logEdit(meta, 'merge-entities', [sourceId, targetId], { source: entitySummary(source), target: entitySummary(target) }, after, { rows: snapshot });
  }

  undo(editId: string, meta: GraphEditMeta): Promise<GraphEditRecord> {
    return undoEdit(this.s, editId, meta);
  }

  async get(editId: string): Promise<GraphEditRecord | null> {
    const [row] = await this.s.tx.rows('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.s.key, editId]);
    return row ? toGraphEdit(row) : null;
  }

  async list(limit: number): Promise<GraphEditRecord[]> {
    const top = Math.max(0, Math.floor(limit));
    const rows = await this.s.tx.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ${top}`, this.s.key);
    return rows.map(toGraphEdit);
  }

  /** Manual links of a merged entity move to the target (a link between the two disappears). */
  private async repointManual(relationships: readonly Row[], sourceId: string, targetId: string): Promise<void> {
    for (const r of relationships) {
      const from = r.source_id === sourceId ? targetId : String(r.source_id);
      const to = r.target_id === sourceId ? targetId : String(r.target_id);
      const where = `WHERE ${this.s.dialect.byIdScope()} AND id = ?`;
      if (from === to) await this.s.tx.exec(`DELETE FROM relationships ${where}`, [...this.s.key, String(r.id)]);
      else await this.s.tx.exec(`UPDATE relationships SET source_id = ?, target_id = ? ${where}`, [from, to, ...this.s.key, String(r.id)]);
    }
  }
}
