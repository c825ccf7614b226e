import { encodeRowSnapshot } from './graph-edit-encoding';
import type { RowSnapshot } from './graph-edit-encoding';
import { entityExists, entityNotFound, mergedAway, relationshipNotFound, selfMerge } from './graph-edit-policy';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RecordedChunkExtraction, RelationshipPatch } from './graph-edit-records';
import { NO_OVERRIDES } from './graph-edit-port';
import type { EntityRow, GraphEditRows, RelationshipRow } from './graph-edit-port';
import { undoEdit } from './graph-undo';

/** What the log keeps of an entity or relationship: enough to see what an edit changed. */
export function entitySummary(e: EntityRow): Record<string, unknown> {
  return { id: e.id, name: e.name, type: e.type, description: e.description, mentionCount: e.mentionCount };
}

export function relationshipSummary(r: RelationshipRow): Record<string, unknown> {
  return { id: r.id, sourceId: r.sourceId, targetId: r.targetId, label: r.label, description: r.description, weight: r.weight };
}

/** The rows mentions cannot rebuild (ids, types, embeddings, manual rows), as undo restores them. */
export function rowSnapshot(entities: readonly EntityRow[], relationships: readonly RelationshipRow[]): RowSnapshot {
  return {
    entities: entities.map((e) => ({ id: e.id, name: e.name, normalizedName: e.normalizedName, type: e.type, description: e.description, kind: e.kind, embedding: e.embedding })),
    relationships: relationships.map((r) => ({
      id: r.id,
      sourceId: r.sourceId,
      targetId: r.targetId,
      label: r.label,
      description: r.description,
      weight: r.weight,
      kind: r.kind,
      embedding: r.embedding,
    })),
  };
}

/**
 * Manual graph edits, each run over the rows of one transaction: overrides, tombstones,
 * synopses and merges, with the log an undo needs (see graph-overlay.ts for the model).
 * A missing target is NOT_FOUND, an entity merged away FAILED_PRECONDITION (graph-edit-policy.ts).
 */
export class GraphEditor {
  constructor(private readonly rows: GraphEditRows) {}

  async requireEntity(id: string): Promise<EntityRow> {
    const row = await this.rows.entity(id);
    if (row !== undefined) return row;
    const merge = await this.rows.activeMergeOf(id);
    throw merge ? mergedAway(id, merge.targetId, merge.editId) : entityNotFound(id);
  }

  async requireRelationship(id: string): Promise<RelationshipRow> {
    const row = await this.rows.relationship(id);
    if (row === undefined) throw relationshipNotFound(id);
    return row;
  }

  async updateEntity(entityId: string, patch: EntityPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.requireEntity(entityId);
    const previous = await this.rows.overlay('entity', entityId);
    await this.rows.saveOverlay('entity', entityId, {
      ...(previous ?? NO_OVERRIDES),
      ...(patch.name !== undefined ? { name: patch.name, normalizedName: patch.normalizedName ?? null } : {}),
      ...(patch.type !== undefined ? { type: patch.type } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
    });
    await this.rows.applyOverrides({ entityIds: new Set([entityId]), relationshipIds: new Set() });
    const after = await this.requireEntity(entityId);
    const undo = { overlay: previous, row: { name: before.name, normalizedName: before.normalizedName, type: before.type, description: before.description } };
    await this.rows.logEdit(meta, 'update-entity', [entityId], entitySummary(before), entitySummary(after), undo);
  }

  async updateRelationship(relationshipId: string, patch: RelationshipPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.requireRelationship(relationshipId);
    const previous = await this.rows.overlay('relationship', relationshipId);
    await this.rows.saveOverlay('relationship', relationshipId, {
      ...(previous ?? NO_OVERRIDES),
      ...(patch.label !== undefined ? { label: patch.label } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.weight !== undefined ? { weight: patch.weight } : {}),
    });
    await this.rows.applyOverrides({ entityIds: new Set(), relationshipIds: new Set([relationshipId]) });
    const after = await this.requireRelationship(relationshipId);
    const undo = { overlay: previous, row: { label: before.label, description: before.description, weight: before.weight } };
    await this.rows.logEdit(meta, 'update-relationship', [relationshipId], relationshipSummary(before), relationshipSummary(after), undo);
  }

  async deleteEntity(entityId: string, meta: GraphEditMeta): Promise<void> {
    const entity = await this.requireEntity(entityId);
    const relationships = await this.rows.relationshipsTouching(entityId);
    const snapshot = await this.recordChunks(meta.id, [entityId], relationships, [entity]);
    await this.rows.tombstone('entity', entityId, meta.id);
    await this.rows.removeFacts([entityId], relationships.map((r) => r.id));
    await this.rows.logEdit(meta, 'delete-entity', [entityId], { ...entitySummary(entity), relationships: relationships.length }, null, { rows: snapshot });
  }

  async deleteRelationship(relationshipId: string, meta: GraphEditMeta): Promise<void> {
    const relationship = await this.requireRelationship(relationshipId);
    const snapshot = await this.recordChunks(meta.id, [], [relationship], []);
    await this.rows.tombstone('relationship', relationshipId, meta.id);
    await this.rows.removeFacts([], [relationshipId]);
    await this.rows.logEdit(meta, 'delete-relationship', [relationshipId], relationshipSummary(relationship), null, { rows: snapshot });
  }

  async createManualEntity(entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], meta: GraphEditMeta): Promise<void> {
    if ((await this.rows.entity(entity.id)) !== undefined) throw entityExists(entity.id);
    for (const link of links) for (const end of [link.sourceId, link.targetId]) if (end !== entity.id) await this.requireEntity(end);
    await this.rows.insertManualEntity(entity);
    for (const link of links) await this.rows.insertManualRelationship(link);
    const after = { ...entitySummary(await this.requireEntity(entity.id)), links: links.map((l) => l.targetId) };
    await this.rows.logEdit(meta, 'create-synopsis', [entity.id, ...links.map((l) => l.targetId)], null, after, { entityId: entity.id });
  }

  async mergeEntities(sourceId: string, targetId: string, meta: GraphEditMeta): Promise<void> {
    if (sourceId === targetId) throw selfMerge();
    await this.rows.lockEntities([sourceId, targetId].sort());
    const source = await this.requireEntity(sourceId);
    const target = await this.requireEntity(targetId);
    const relationships = await this.rows.relationshipsTouching(sourceId);
    const recorded: Array<[string, RecordedChunkExtraction]> = [];
    for (const chunkId of await this.rows.chunksMentioning([sourceId], relationships.map((r) => r.id))) recorded.push([chunkId, await this.rows.chunkWrites(chunkId)]);
    const snapshot = encodeRowSnapshot(rowSnapshot([source], relationships));
    await this.rows.addMerge(meta.id, sourceId, targetId, meta.at);
    // Clear what the source holds, then replay its chunks: with the merge active, the overlay
    // sends every mention to the target (and records the chunk for undo). Manual links of the
    // source move to the target (a link between the two disappears).
    for (const r of relationships.filter((x) => x.kind === 'manual')) {
      const from = r.sourceId === sourceId ? targetId : r.sourceId;
      const to = r.targetId === sourceId ? targetId : r.targetId;
      if (from === to) await this.rows.removeFacts([], [r.id]);
      else await this.rows.moveRelationship(r.id, from, to);
    }
    await this.rows.removeFacts([sourceId], relationships.filter((r) => r.kind !== 'manual').map((r) => r.id));
    for (const [chunkId, x] of recorded) await this.rows.replayChunk(chunkId, x.entities, x.relationships);
    await this.rows.refreshDerived({ entityIds: new Set([targetId]), relationshipIds: new Set() });
    const after = entitySummary(await this.requireEntity(targetId));
    await this.rows.logEdit(meta, 'merge-entities', [sourceId, targetId], { source: entitySummary(source), target: entitySummary(target) }, after, { rows: snapshot });
  }

  undo(editId: string, meta: GraphEditMeta): Promise<GraphEditRecord> {
    return undoEdit(this.rows, editId, meta);
  }

  /** Records each affected chunk's current writes for the edit; returns the rows to restore. */
  private async recordChunks(editId: string, entityIds: readonly string[], relationships: readonly RelationshipRow[], entities: readonly EntityRow[]): Promise<string> {
    for (const chunkId of await this.rows.chunksMentioning(entityIds, relationships.map((r) => r.id))) {
      await this.rows.recordChunkWrites(editId, chunkId, await this.rows.chunkWrites(chunkId));
    }
    return encodeRowSnapshot(rowSnapshot(entities, relationships));
  }
}
