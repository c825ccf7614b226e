import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type {
  EntityPatch,
  GraphEditAction,
  GraphEditMeta,
  GraphEditRecord,
  ManualEntityWrite,
  ManualRelationshipWrite,
  RecordedChunkExtraction,
  RelationshipPatch,
} from '../graph-edit-records';
import { decodeChunkExtraction, decodeRowSnapshot, encodeChunkExtraction, encodeRowSnapshot, laterEditsBlockingUndo } from '../graph-overlay';
import type { RowSnapshot } from '../graph-overlay';
import {
  STRUCTURAL_ACTIONS,
  entityNotFound,
  entitySummary,
  mergedAway,
  relationshipNotFound,
  relationshipSummary,
  selfMerge,
  toGraphEdit,
  toOverlayRow,
  toRecordedChunkExtraction,
  toRowSnapshot,
} from '../graph-edit-rows';
import type { OverlayRow } from '../graph-edit-rows';
import type { Row } from '../row-mappers';
import type { SqlSession } from '../sql/sql-session';
import { marks, toSqlTime } from './mysql-rows';
import { blobToVector, textToVector } from './vector-codec';
import type { VectorSql } from './vector-sql';
import { applyOverrides } from './graph-overlay-sql';
import { refreshDerived, writeChunkExtraction } from './graph-writes';
import type { Touched } from '../graph-overlay';

/**
 * Manual graph edits of the MySQL store, each run inside the caller's transaction. Same model
 * as the SQLite adapter (see graph-overlay.ts); rows an edit reads are locked FOR UPDATE.
 */
export class MysqlGraphEdits {
  constructor(
    private readonly tx: SqlSession,
    private readonly vectors: VectorSql,
    private readonly scope: KbScope,
  ) {}

  private get key(): [string, string] {
    return [this.scope.tenantId, this.scope.kbId];
  }

  async updateEntity(entityId: string, patch: EntityPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.requireEntity(entityId);
    const previous = await this.overlayRow('entity', entityId);
    await this.saveOverlay('entity', entityId, {
      ...(previous ?? emptyOverlay()),
      ...(patch.name !== undefined ? { name: patch.name, normalizedName: patch.normalizedName ?? null } : {}),
      ...(patch.type !== undefined ? { type: patch.type } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
    });
    await applyOverrides(this.tx, this.scope, { entityIds: new Set([entityId]), relationshipIds: new Set() });
    const after = await this.requireEntity(entityId);
    const undo = { overlay: previous, row: { name: before.name, normalizedName: before.normalized_name, type: before.type, description: before.description } };
    await this.logEdit(meta, 'update-entity', [entityId], entitySummary(before), entitySummary(after), undo);
  }

  async updateRelationship(relationshipId: string, patch: RelationshipPatch, meta: GraphEditMeta): Promise<void> {
    const before = await this.requireRelationship(relationshipId);
    const previous = await this.overlayRow('relationship', relationshipId);
    await this.saveOverlay('relationship', relationshipId, {
      ...(previous ?? emptyOverlay()),
      ...(patch.label !== undefined ? { label: patch.label } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.weight !== undefined ? { weight: patch.weight } : {}),
    });
    await applyOverrides(this.tx, this.scope, { entityIds: new Set(), relationshipIds: new Set([relationshipId]) });
    const after = await this.requireRelationship(relationshipId);
    const undo = { overlay: previous, row: { label: before.label, description: before.description, weight: Number(before.weight) } };
    await this.logEdit(meta, 'update-relationship', [relationshipId], relationshipSummary(before), relationshipSummary(after), undo);
  }

  async deleteEntity(entityId: string, meta: GraphEditMeta): Promise<void> {
    const entity = await this.requireEntity(entityId);
    const relationships = await this.relationshipRowsTouching(entityId);
    const snapshot = await this.recordChunks(meta.id, [entityId], relationships, [entity]);
    await this.tombstone('entity', entityId, meta.id);
    await this.removeFacts([entityId], relationships.map((r) => String(r.id)));
    await this.logEdit(meta, 'delete-entity', [entityId], { ...entitySummary(entity), relationships: relationships.length }, null, { rows: snapshot });
  }

  async deleteRelationship(relationshipId: string, meta: GraphEditMeta): Promise<void> {
    const relationship = await this.requireRelationship(relationshipId);
    const snapshot = await this.recordChunks(meta.id, [], [relationship], []);
    await this.tombstone('relationship', relationshipId, meta.id);
    await this.removeFacts([], [relationshipId]);
    await this.logEdit(meta, 'delete-relationship', [relationshipId], relationshipSummary(relationship), null, { rows: snapshot });
  }

  async createManualEntity(entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], meta: GraphEditMeta): Promise<void> {
    if ((await this.entityRow(entity.id)) !== undefined) throw new TrellisError(ErrorCode.AlreadyExists, `entity ${entity.id} already exists`);
    for (const link of links) for (const end of [link.sourceId, link.targetId]) if (end !== entity.id) await this.requireEntity(end);
    await this.tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?)`,
      [...this.key, entity.id, entity.name, entity.normalizedName, entity.type, entity.description, this.vectors.embeddingValue(entity.embedding)],
    );
    for (const l of links) {
      await this.tx.exec(
        `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, kind, embedding)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?) ON DUPLICATE KEY UPDATE mention_count = mention_count`,
        [...this.key, l.id, l.sourceId, l.targetId, l.label, l.description, l.weight, this.vectors.embeddingValue(l.embedding)],
      );
    }
    const after = { ...entitySummary(await this.requireEntity(entity.id)), links: links.map((l) => l.targetId) };
    await this.logEdit(meta, 'create-synopsis', [entity.id, ...links.map((l) => l.targetId)], null, after, { entityId: entity.id });
  }

  async mergeEntities(sourceId: string, targetId: string, meta: GraphEditMeta): Promise<void> {
    if (sourceId === targetId) throw selfMerge();
    const [first, second] = [sourceId, targetId].sort();
    await this.lockEntities([first!, second!]);
    const source = await this.requireEntity(sourceId);
    const target = await this.requireEntity(targetId);
    const relationships = await this.relationshipRowsTouching(sourceId);
    const chunkIds = await this.chunksOf([sourceId], relationships.map((r) => String(r.id)));
    const recorded: Array<[string, RecordedChunkExtraction]> = [];
    for (const chunkId of chunkIds) recorded.push([chunkId, await this.reconstruct(chunkId)]);
    const snapshot = encodeRowSnapshot(this.toSnapshot([source], relationships));
    await this.tx.exec('INSERT INTO graph_merges (tenant_id, kb_id, id, source_id, target_id, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      ...this.key,
      meta.id,
      sourceId,
      targetId,
      toSqlTime(meta.at),
    ]);
    // Clear what the source holds, then replay its chunks: with the merge active, the overlay
    // sends every mention to the target (and records the chunk for undo).
    await this.repointManual(relationships.filter((r) => r.kind === 'manual'), sourceId, targetId);
    await this.removeFacts([sourceId], relationships.filter((r) => r.kind !== 'manual').map((r) => String(r.id)));
    for (const [chunkId, x] of recorded) await writeChunkExtraction(this.tx, this.vectors, this.scope, chunkId, x.entities, x.relationships, true);
    await refreshDerived(this.tx, this.scope, { entityIds: new Set([targetId]), relationshipIds: new Set() });
    const after = entitySummary(await this.requireEntity(targetId));
    await this.logEdit(meta, 'merge-entities', [sourceId, targetId], { source: entitySummary(source), target: entitySummary(target) }, after, { rows: snapshot });
  }

  async undo(editId: string, meta: GraphEditMeta): Promise<GraphEditRecord> {
    const [row] = await this.tx.rows('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ? FOR UPDATE', [...this.key, editId]);
    if (row === undefined) throw TrellisError.notFound(`graph edit ${editId} not found`);
    const edit = toGraphEdit(row);
    if (edit.undoneAt !== null) throw new TrellisError(ErrorCode.FailedPrecondition, `graph edit ${editId} was already undone`);
    // Chunk writers lock the rows they name before settling on the overlay: holding the
    // targets' rows makes a concurrent write wait for this undo and then see it.
    await this.lockEntities([...edit.targetIds].sort());
    const active = (
      await this.tx.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL AND action IN (${marks(STRUCTURAL_ACTIONS)})`, [
        ...this.key,
        ...STRUCTURAL_ACTIONS,
      ])
    ).map(toGraphEdit);
    const blocking = laterEditsBlockingUndo(edit, active);
    if (blocking.length > 0) throw new TrellisError(ErrorCode.FailedPrecondition, `undo the later edits ${blocking.join(', ')} first: they touch the same entities`);
    await this.revert(edit, JSON.parse(String(row.undo_state)) as UndoState, meta.at);
    await this.tx.exec('UPDATE graph_edits SET undone_at = ?, undone_by = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [toSqlTime(meta.at), meta.actor, ...this.key, editId]);
    return { ...edit, undoneAt: meta.at, undoneBy: meta.actor };
  }

  async get(editId: string): Promise<GraphEditRecord | null> {
    const [row] = await this.tx.rows('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.key, editId]);
    return row ? toGraphEdit(row) : null;
  }

  async list(limit: number): Promise<GraphEditRecord[]> {
    const rows = await this.tx.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ${Math.max(0, Math.floor(limit))}`, this.key);
    return rows.map(toGraphEdit);
  }

  // --- undo ----------------------------------------------------------------------------------

  private async revert(edit: GraphEditRecord, undo: UndoState, at: string): Promise<void> {
    const action: GraphEditAction = edit.action;
    switch (action) {
      case 'merge-entities':
        await this.tx.exec('UPDATE graph_merges SET undone_at = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [toSqlTime(at), ...this.key, edit.id]);
        return this.restoreAndReplay(edit.id, undo.rows!);
      case 'delete-entity':
      case 'delete-relationship':
        await this.tx.exec('UPDATE graph_overlays SET deleted_by = NULL WHERE tenant_id = ? AND kb_id = ? AND deleted_by = ?', [...this.key, edit.id]);
        return this.restoreAndReplay(edit.id, undo.rows!);
      case 'update-entity': {
        const id = edit.targetIds[0]!;
        await this.saveOverlay('entity', id, undo.overlay ?? null);
        const r = undo.row as { name: string; normalizedName: string; type: string; description: string };
        await this.tx.exec('UPDATE entities SET name = ?, normalized_name = ?, type = ?, description = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [
          r.name,
          r.normalizedName,
          r.type,
          r.description,
          ...this.key,
          id,
        ]);
        return refreshDerived(this.tx, this.scope, { entityIds: new Set([id]), relationshipIds: new Set() });
      }
      case 'update-relationship': {
        const id = edit.targetIds[0]!;
        await this.saveOverlay('relationship', id, undo.overlay ?? null);
        const r = undo.row as { label: string; description: string; weight: number };
        await this.tx.exec('UPDATE relationships SET label = ?, description = ?, weight = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [r.label, r.description, r.weight, ...this.key, id]);
        return refreshDerived(this.tx, this.scope, { entityIds: new Set(), relationshipIds: new Set([id]) });
      }
      case 'create-synopsis': {
        const id = undo.entityId!;
        return this.removeFacts([id], (await this.relationshipRowsTouching(id)).map((r) => String(r.id)));
      }
    }
  }

  /** Puts back the rows mentions cannot rebuild, then replays the recorded chunk writes that still apply. */
  private async restoreAndReplay(editId: string, encodedRows: string): Promise<void> {
    const snapshot = decodeRowSnapshot(encodedRows);
    const touched: Touched = { entityIds: new Set(), relationshipIds: new Set() };
    const vector = (v: Float32Array | null) => (v === null ? null : this.vectors.embeddingValue(v));
    for (const e of snapshot.entities) {
      await this.tx.exec(
        `INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
         ON DUPLICATE KEY UPDATE name = VALUES(name), normalized_name = VALUES(normalized_name), type = VALUES(type),
           description = VALUES(description), kind = VALUES(kind), embedding = VALUES(embedding)`,
        [...this.key, e.id, e.name, e.normalizedName, e.type, e.description, e.kind, vector(e.embedding)],
      );
      touched.entityIds.add(e.id);
    }
    for (const r of snapshot.relationships) {
      if ((await this.entityRow(r.sourceId)) === undefined || (await this.entityRow(r.targetId)) === undefined) continue;
      await this.tx.exec(
        `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
         ON DUPLICATE KEY UPDATE source_id = VALUES(source_id), target_id = VALUES(target_id), label = VALUES(label),
           description = VALUES(description), weight = VALUES(weight), kind = VALUES(kind), embedding = VALUES(embedding)`,
        [...this.key, r.id, r.sourceId, r.targetId, r.label, r.description, r.weight, r.kind, vector(r.embedding)],
      );
      touched.relationshipIds.add(r.id);
    }
    const recorded = (await this.tx.rows('SELECT chunk_id, extraction FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND edit_id = ? ORDER BY chunk_id', [...this.key, editId])).map(
      (r) => [String(r.chunk_id), decodeChunkExtraction(String(r.extraction))] as const,
    );
    // A relationship first written while the edit was active got moved ends; replay recreates it.
    for (const [, x] of recorded) {
      for (const r of x.relationships) {
        const [row] = await this.tx.rows('SELECT source_id, target_id FROM relationships WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.key, r.relationshipId]);
        if (row !== undefined && (String(row.source_id) !== r.sourceId || String(row.target_id) !== r.targetId)) await this.removeFacts([], [r.relationshipId]);
      }
    }
    for (const [chunkId, x] of recorded) await writeChunkExtraction(this.tx, this.vectors, this.scope, chunkId, x.entities, x.relationships, true);
    await refreshDerived(this.tx, this.scope, touched);
  }

  // --- helpers -------------------------------------------------------------------------------

  private async recordChunks(editId: string, entityIds: string[], relationships: Row[], entities: Row[]): Promise<string> {
    for (const chunkId of await this.chunksOf(entityIds, relationships.map((r) => String(r.id)))) {
      await this.tx.exec('INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?)', [
        ...this.key,
        editId,
        chunkId,
        encodeChunkExtraction(await this.reconstruct(chunkId)),
      ]);
    }
    return encodeRowSnapshot(this.toSnapshot(entities, relationships));
  }

  private async reconstruct(chunkId: string): Promise<RecordedChunkExtraction> {
    const entities = await this.tx.rows(
      `SELECT m.entity_id, m.name, m.description, m.needs_review, e.normalized_name, e.type, e.embedding FROM entity_mentions m
       JOIN entities e ON e.tenant_id = m.tenant_id AND e.kb_id = m.kb_id AND e.id = m.entity_id
       WHERE m.tenant_id = ? AND m.kb_id = ? AND m.chunk_id = ? ORDER BY m.entity_id`,
      [...this.key, chunkId],
    );
    const relationships = await this.tx.rows(
      `SELECT m.relationship_id, m.description, m.strength, r.source_id, r.target_id, r.label, r.embedding FROM relationship_mentions m
       JOIN relationships r ON r.tenant_id = m.tenant_id AND r.kb_id = m.kb_id AND r.id = m.relationship_id
       WHERE m.tenant_id = ? AND m.kb_id = ? AND m.chunk_id = ? ORDER BY m.relationship_id`,
      [...this.key, chunkId],
    );
    return toRecordedChunkExtraction(entities, relationships, (v) => this.readVector(v) ?? new Float32Array(0));
  }

  private readVector(value: unknown): Float32Array | null {
    if (value === null || value === undefined) return null;
    return this.vectors.storage === 'blob' ? blobToVector(value) : textToVector(String(value));
  }

  private async chunksOf(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<string[]> {
    const chunks = new Set<string>();
    if (entityIds.length > 0) {
      for (const r of await this.tx.rows(`SELECT chunk_id FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id IN (${marks(entityIds)})`, [...this.key, ...entityIds])) {
        chunks.add(String(r.chunk_id));
      }
    }
    if (relationshipIds.length > 0) {
      const rows = await this.tx.rows(`SELECT chunk_id FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND relationship_id IN (${marks(relationshipIds)})`, [
        ...this.key,
        ...relationshipIds,
      ]);
      for (const r of rows) chunks.add(String(r.chunk_id));
    }
    return [...chunks].sort();
  }

  private async removeFacts(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<void> {
    const dangling: string[] = [];
    for (const id of entityIds) for (const r of await this.relationshipRowsTouching(id)) dangling.push(String(r.id));
    for (const id of new Set([...relationshipIds, ...dangling])) {
      await this.tx.exec('DELETE FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND relationship_id = ?', [...this.key, id]);
      await this.tx.exec('DELETE FROM relationships WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.key, id]);
    }
    for (const id of entityIds) {
      await this.tx.exec('DELETE FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id = ?', [...this.key, id]);
      await this.tx.exec('DELETE FROM entities WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.key, id]);
    }
  }

  private async repointManual(relationships: readonly Row[], sourceId: string, targetId: string): Promise<void> {
    for (const r of relationships) {
      const from = r.source_id === sourceId ? targetId : String(r.source_id);
      const to = r.target_id === sourceId ? targetId : String(r.target_id);
      if (from === to) await this.tx.exec('DELETE FROM relationships WHERE tenant_id = ? AND kb_id = ? AND id = ?', [...this.key, String(r.id)]);
      else await this.tx.exec('UPDATE relationships SET source_id = ?, target_id = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [from, to, ...this.key, String(r.id)]);
    }
  }

  private async tombstone(kind: 'entity' | 'relationship', id: string, editId: string): Promise<void> {
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, deleted_by) VALUES (?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE deleted_by = VALUES(deleted_by)`,
      [...this.key, kind, id, editId],
    );
  }

  private async overlayRow(kind: 'entity' | 'relationship', id: string): Promise<OverlayRow | null> {
    const [row] = await this.tx.rows('SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id = ? FOR UPDATE', [...this.key, kind, id]);
    return toOverlayRow(row);
  }

  private async saveOverlay(kind: 'entity' | 'relationship', id: string, o: OverlayRow | null): Promise<void> {
    const v = o ?? emptyOverlay();
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, name, normalized_name, type, description, label, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE name = VALUES(name), normalized_name = VALUES(normalized_name), type = VALUES(type),
         description = VALUES(description), label = VALUES(label), weight = VALUES(weight)`,
      [...this.key, kind, id, v.name, v.normalizedName, v.type, v.description, v.label, v.weight],
    );
  }

  private async lockEntities(ids: readonly string[]): Promise<void> {
    await this.tx.rows(`SELECT id FROM entities WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(ids)}) ORDER BY id FOR UPDATE`, [...this.key, ...ids]);
  }

  private async entityRow(id: string): Promise<Row | undefined> {
    const [row] = await this.tx.rows(
      'SELECT id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding FROM entities WHERE tenant_id = ? AND kb_id = ? AND id = ? FOR UPDATE',
      [...this.key, id],
    );
    return row;
  }

  private async requireEntity(id: string): Promise<Row> {
    const row = await this.entityRow(id);
    if (row !== undefined) return row;
    const [merge] = await this.tx.rows('SELECT id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND undone_at IS NULL', [...this.key, id]);
    throw merge ? mergedAway(id, merge) : entityNotFound(id);
  }

  private async requireRelationship(id: string): Promise<Row> {
    const [row] = await this.tx.rows(
      'SELECT id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding FROM relationships WHERE tenant_id = ? AND kb_id = ? AND id = ? FOR UPDATE',
      [...this.key, id],
    );
    if (row === undefined) throw relationshipNotFound(id);
    return row;
  }

  private relationshipRowsTouching(entityId: string): Promise<Row[]> {
    return this.tx.rows(
      `SELECT id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding FROM relationships
       WHERE tenant_id = ? AND kb_id = ? AND (source_id = ? OR target_id = ?) ORDER BY id FOR UPDATE`,
      [...this.key, entityId, entityId],
    );
  }

  private async logEdit(meta: GraphEditMeta, action: GraphEditAction, targetIds: string[], before: unknown, after: unknown, undo: UndoState): Promise<void> {
    await this.tx.exec(
      `INSERT INTO graph_edits (tenant_id, kb_id, id, actor, action, target_ids, before_state, after_state, undo_state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [...this.key, meta.id, meta.actor, action, JSON.stringify(targetIds), JSON.stringify(before), JSON.stringify(after), JSON.stringify(undo), toSqlTime(meta.at)],
    );
  }

  private toSnapshot(entities: readonly Row[], relationships: readonly Row[]): RowSnapshot {
    return toRowSnapshot(entities, relationships, (v) => this.readVector(v));
  }

}

interface UndoState {
  rows?: string;
  overlay?: OverlayRow | null;
  row?: Record<string, unknown>;
  entityId?: string;
}

function emptyOverlay(): OverlayRow {
  return { name: null, normalizedName: null, type: null, description: null, label: null, weight: null };
}
