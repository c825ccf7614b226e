import type Database from 'better-sqlite3';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '../records';
import type { EntityPatch, GraphEditAction, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from '../graph-edit-records';
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
  toRowSnapshot,
} from '../graph-edit-rows';
import type { OverlayRow } from '../graph-edit-rows';
import type { Row } from '../row-mappers';
import { bufferToVector, vectorToBuffer } from '../vector-math';

import { SqliteGraphOverlay } from './sqlite-graph-overlay';
import type { Touched } from '../graph-overlay';

/** What the graph edits need from the store they extend. */
export interface SqliteGraphHost {
  /** The store's chunk write, overlay included; `replay` keeps the chunk's other recorded writes. */
  writeChunk(scope: KbScope, chunkId: string, entities: readonly EntityMentionWrite[], relationships: readonly RelationshipMentionWrite[], replay: boolean): void;
  /** Recomputes derived values (and deletes extracted rows left without mentions). */
  refresh(scope: KbScope, touched: Touched): void;
  invalidate(kbId: string): void;
}

const ENTITY_ROW = 'id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding';
const RELATIONSHIP_ROW = 'id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding';
export const GRAPH_EDIT_TABLES = ['graph_overlays', 'graph_merges', 'graph_edit_chunks', 'graph_edits'] as const;

/**
 * Manual graph edits of the SQLite store (see graph-overlay.ts for the model). Each public
 * method is one transaction; nested store writes run as savepoints inside it.
 */
export class SqliteGraphEdits {
  constructor(
    private readonly db: Database.Database,
    private readonly overlay: SqliteGraphOverlay,
    private readonly host: SqliteGraphHost,
  ) {}

  // --- edits ---------------------------------------------------------------------------------

  updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, meta: GraphEditMeta): void {
    this.db.transaction(() => {
      const before = this.requireEntity(scope, entityId);
      const previous = this.overlayRow(scope, 'entity', entityId);
      this.saveOverlay(scope, 'entity', entityId, {
        ...(previous ?? emptyOverlay()),
        ...(patch.name !== undefined ? { name: patch.name, normalizedName: patch.normalizedName ?? null } : {}),
        ...(patch.type !== undefined ? { type: patch.type } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
      });
      this.overlay.applyOverrides(scope, { entityIds: new Set([entityId]), relationshipIds: new Set() });
      const after = this.requireEntity(scope, entityId);
      const undo = { overlay: previous, row: { name: before.name, normalizedName: before.normalized_name, type: before.type, description: before.description } };
      this.logEdit(scope, meta, 'update-entity', [entityId], entitySummary(before), entitySummary(after), undo);
      this.host.invalidate(scope.kbId);
    })();
  }

  updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, meta: GraphEditMeta): void {
    this.db.transaction(() => {
      const before = this.requireRelationship(scope, relationshipId);
      const previous = this.overlayRow(scope, 'relationship', relationshipId);
      this.saveOverlay(scope, 'relationship', relationshipId, {
        ...(previous ?? emptyOverlay()),
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.weight !== undefined ? { weight: patch.weight } : {}),
      });
      this.overlay.applyOverrides(scope, { entityIds: new Set(), relationshipIds: new Set([relationshipId]) });
      const after = this.requireRelationship(scope, relationshipId);
      const undo = { overlay: previous, row: { label: before.label, description: before.description, weight: before.weight } };
      this.logEdit(scope, meta, 'update-relationship', [relationshipId], relationshipSummary(before), relationshipSummary(after), undo);
      this.host.invalidate(scope.kbId);
    })();
  }

  deleteEntity(scope: KbScope, entityId: string, meta: GraphEditMeta): void {
    this.db.transaction(() => {
      const entity = this.requireEntity(scope, entityId);
      const relationships = this.relationshipRowsTouching(scope, entityId);
      const snapshot = this.recordChunks(scope, meta.id, [entityId], relationships, [entity]);
      this.tombstone(scope, 'entity', entityId, meta.id);
      this.removeFacts(scope, [entityId], relationships.map((r) => String(r.id)));
      this.logEdit(scope, meta, 'delete-entity', [entityId], { ...entitySummary(entity), relationships: relationships.length }, null, { rows: snapshot });
      this.host.invalidate(scope.kbId);
    })();
  }

  deleteRelationship(scope: KbScope, relationshipId: string, meta: GraphEditMeta): void {
    this.db.transaction(() => {
      const relationship = this.requireRelationship(scope, relationshipId);
      const snapshot = this.recordChunks(scope, meta.id, [], [relationship], []);
      this.tombstone(scope, 'relationship', relationshipId, meta.id);
      this.removeFacts(scope, [], [relationshipId]);
      this.logEdit(scope, meta, 'delete-relationship', [relationshipId], relationshipSummary(relationship), null, { rows: snapshot });
      this.host.invalidate(scope.kbId);
    })();
  }

  createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], meta: GraphEditMeta): void {
    this.db.transaction(() => {
      if (this.entityRow(scope, entity.id) !== undefined) throw new TrellisError(ErrorCode.AlreadyExists, `entity ${entity.id} already exists`);
      for (const link of links) for (const end of [link.sourceId, link.targetId]) if (end !== entity.id) this.requireEntity(scope, end);
      this.db
        .prepare(
          `INSERT INTO entities (id, tenant_id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding)
           VALUES (?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?)`,
        )
        .run(entity.id, scope.tenantId, scope.kbId, entity.name, entity.normalizedName, entity.type, entity.description, vectorToBuffer(entity.embedding));
      const insertLink = this.db.prepare(
        `INSERT INTO relationships (id, tenant_id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?) ON CONFLICT (id) DO NOTHING`,
      );
      for (const l of links) insertLink.run(l.id, scope.tenantId, scope.kbId, l.sourceId, l.targetId, l.label, l.description, l.weight, vectorToBuffer(l.embedding));
      const after = { ...entitySummary(this.requireEntity(scope, entity.id)), links: links.map((l) => l.targetId) };
      this.logEdit(scope, meta, 'create-synopsis', [entity.id, ...links.map((l) => l.targetId)], null, after, { entityId: entity.id });
      this.host.invalidate(scope.kbId);
    })();
  }

  mergeEntities(scope: KbScope, sourceId: string, targetId: string, meta: GraphEditMeta): void {
    this.db.transaction(() => {
      if (sourceId === targetId) throw selfMerge();
      const source = this.requireEntity(scope, sourceId);
      const target = this.requireEntity(scope, targetId);
      const relationships = this.relationshipRowsTouching(scope, sourceId);
      const chunkIds = this.chunksOf(scope, [sourceId], relationships.map((r) => String(r.id)));
      const recorded = chunkIds.map((chunkId) => [chunkId, this.overlay.reconstruct(scope, chunkId)] as const);
      const snapshot = encodeRowSnapshot(toSnapshot([source], relationships));
      this.db
        .prepare('INSERT INTO graph_merges (tenant_id, kb_id, id, source_id, target_id, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(scope.tenantId, scope.kbId, meta.id, sourceId, targetId, meta.at);
      // Clear what the source holds, then replay its chunks: with the merge active, the
      // overlay sends every mention to the target (and records the chunk for undo).
      this.repointManual(relationships.filter((r) => r.kind === 'manual'), sourceId, targetId);
      this.removeFacts(scope, [sourceId], relationships.filter((r) => r.kind !== 'manual').map((r) => String(r.id)));
      for (const [chunkId, x] of recorded) this.host.writeChunk(scope, chunkId, x.entities, x.relationships, true);
      this.host.refresh(scope, { entityIds: new Set([targetId]), relationshipIds: new Set() });
      const after = entitySummary(this.requireEntity(scope, targetId));
      this.logEdit(scope, meta, 'merge-entities', [sourceId, targetId], { source: entitySummary(source), target: entitySummary(target) }, after, { rows: snapshot });
      this.host.invalidate(scope.kbId);
    })();
  }

  undo(scope: KbScope, editId: string, meta: GraphEditMeta): GraphEditRecord {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ?').get(scope.tenantId, scope.kbId, editId) as Row | undefined;
      if (row === undefined) throw TrellisError.notFound(`graph edit ${editId} not found`);
      const edit = toGraphEdit(row);
      if (edit.undoneAt !== null) throw new TrellisError(ErrorCode.FailedPrecondition, `graph edit ${editId} was already undone`);
      const active = (
        this.db
          .prepare(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL AND action IN (${STRUCTURAL_ACTIONS.map(() => '?').join(', ')})`)
          .all(scope.tenantId, scope.kbId, ...STRUCTURAL_ACTIONS) as Row[]
      ).map(toGraphEdit);
      const blocking = laterEditsBlockingUndo(edit, active);
      if (blocking.length > 0) throw new TrellisError(ErrorCode.FailedPrecondition, `undo the later edits ${blocking.join(', ')} first: they touch the same entities`);
      const undo = JSON.parse(String(row.undo_state)) as UndoState;
      this.revert(scope, edit, undo, meta.at);
      this.db.prepare('UPDATE graph_edits SET undone_at = ?, undone_by = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?').run(meta.at, meta.actor, scope.tenantId, scope.kbId, editId);
      this.host.invalidate(scope.kbId);
      return { ...edit, undoneAt: meta.at, undoneBy: meta.actor };
    })();
  }

  get(scope: KbScope, editId: string): GraphEditRecord | null {
    const row = this.db.prepare('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ?').get(scope.tenantId, scope.kbId, editId) as Row | undefined;
    return row ? toGraphEdit(row) : null;
  }

  list(scope: KbScope, limit: number): GraphEditRecord[] {
    return (
      this.db.prepare('SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(scope.tenantId, scope.kbId, limit) as Row[]
    ).map(toGraphEdit);
  }

  // --- undo ----------------------------------------------------------------------------------

  private revert(scope: KbScope, edit: GraphEditRecord, undo: UndoState, at: string): void {
    const action: GraphEditAction = edit.action;
    switch (action) {
      case 'merge-entities':
        this.db.prepare('UPDATE graph_merges SET undone_at = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?').run(at, scope.tenantId, scope.kbId, edit.id);
        return this.restoreAndReplay(scope, edit.id, undo.rows!);
      case 'delete-entity':
      case 'delete-relationship':
        this.db.prepare('UPDATE graph_overlays SET deleted_by = NULL WHERE tenant_id = ? AND kb_id = ? AND deleted_by = ?').run(scope.tenantId, scope.kbId, edit.id);
        return this.restoreAndReplay(scope, edit.id, undo.rows!);
      case 'update-entity': {
        const id = edit.targetIds[0]!;
        this.saveOverlay(scope, 'entity', id, undo.overlay ?? null);
        const r = undo.row as { name: string; normalizedName: string; type: string; description: string };
        this.db.prepare('UPDATE entities SET name = ?, normalized_name = ?, type = ?, description = ? WHERE id = ?').run(r.name, r.normalizedName, r.type, r.description, id);
        return this.host.refresh(scope, { entityIds: new Set([id]), relationshipIds: new Set() });
      }
      case 'update-relationship': {
        const id = edit.targetIds[0]!;
        this.saveOverlay(scope, 'relationship', id, undo.overlay ?? null);
        const r = undo.row as { label: string; description: string; weight: number };
        this.db.prepare('UPDATE relationships SET label = ?, description = ?, weight = ? WHERE id = ?').run(r.label, r.description, r.weight, id);
        return this.host.refresh(scope, { entityIds: new Set(), relationshipIds: new Set([id]) });
      }
      case 'create-synopsis': {
        const id = undo.entityId!;
        this.removeFacts(scope, [id], this.relationshipRowsTouching(scope, id).map((r) => String(r.id)));
        return;
      }
    }
  }

  /**
   * Puts back the rows mentions cannot rebuild (ids, types, embeddings, manual rows), then
   * replays the recorded writes of every chunk that still exists: the graph is re-derived as
   * if the edit had never been made, including chunks indexed since.
   */
  private restoreAndReplay(scope: KbScope, editId: string, encodedRows: string): void {
    const snapshot = decodeRowSnapshot(encodedRows);
    const touched: Touched = { entityIds: new Set(), relationshipIds: new Set() };
    const upsertEntity = this.db.prepare(
      `INSERT INTO entities (id, tenant_id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, normalized_name = excluded.normalized_name, type = excluded.type,
         description = excluded.description, kind = excluded.kind, embedding = excluded.embedding`,
    );
    for (const e of snapshot.entities) {
      upsertEntity.run(e.id, scope.tenantId, scope.kbId, e.name, e.normalizedName, e.type, e.description, e.kind, e.embedding ? vectorToBuffer(e.embedding) : null);
      touched.entityIds.add(e.id);
    }
    const upsertRelationship = this.db.prepare(
      `INSERT INTO relationships (id, tenant_id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
       ON CONFLICT (id) DO UPDATE SET source_id = excluded.source_id, target_id = excluded.target_id, label = excluded.label,
         description = excluded.description, weight = excluded.weight, kind = excluded.kind, embedding = excluded.embedding`,
    );
    for (const r of snapshot.relationships) {
      if (this.entityRow(scope, r.sourceId) === undefined || this.entityRow(scope, r.targetId) === undefined) continue;
      upsertRelationship.run(r.id, scope.tenantId, scope.kbId, r.sourceId, r.targetId, r.label, r.description, r.weight, r.kind, r.embedding ? vectorToBuffer(r.embedding) : null);
      touched.relationshipIds.add(r.id);
    }
    const recorded = (
      this.db.prepare('SELECT chunk_id, extraction FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND edit_id = ? ORDER BY chunk_id').all(scope.tenantId, scope.kbId, editId) as Array<{
        chunk_id: string;
        extraction: string;
      }>
    ).map((r) => [r.chunk_id, decodeChunkExtraction(r.extraction)] as const);
    // A relationship first written while the edit was active was created with moved ends;
    // replay recreates it with its own.
    const rowEnds = this.db.prepare('SELECT source_id, target_id FROM relationships WHERE id = ? AND tenant_id = ? AND kb_id = ?');
    for (const [, x] of recorded) {
      for (const r of x.relationships) {
        const row = rowEnds.get(r.relationshipId, scope.tenantId, scope.kbId) as { source_id: string; target_id: string } | undefined;
        if (row !== undefined && (row.source_id !== r.sourceId || row.target_id !== r.targetId)) this.removeFacts(scope, [], [r.relationshipId]);
      }
    }
    for (const [chunkId, x] of recorded) this.host.writeChunk(scope, chunkId, x.entities, x.relationships, true);
    this.host.refresh(scope, touched);
  }

  // --- helpers -------------------------------------------------------------------------------

  /** Records each affected chunk's current writes for the edit; returns the rows to restore. */
  private recordChunks(scope: KbScope, editId: string, entityIds: string[], relationships: Row[], entities: Row[]): string {
    const record = this.db.prepare('INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?)');
    for (const chunkId of this.chunksOf(scope, entityIds, relationships.map((r) => String(r.id)))) {
      record.run(scope.tenantId, scope.kbId, editId, chunkId, encodeChunkExtraction(this.overlay.reconstruct(scope, chunkId)));
    }
    return encodeRowSnapshot(toSnapshot(entities, relationships));
  }

  private chunksOf(scope: KbScope, entityIds: readonly string[], relationshipIds: readonly string[]): string[] {
    const chunks = new Set<string>();
    const byEntity = this.db.prepare('SELECT chunk_id FROM entity_mentions WHERE entity_id = ? AND tenant_id = ? AND kb_id = ?').pluck();
    const byRelationship = this.db.prepare('SELECT chunk_id FROM relationship_mentions WHERE relationship_id = ? AND tenant_id = ? AND kb_id = ?').pluck();
    for (const id of entityIds) for (const c of byEntity.all(id, scope.tenantId, scope.kbId) as string[]) chunks.add(c);
    for (const id of relationshipIds) for (const c of byRelationship.all(id, scope.tenantId, scope.kbId) as string[]) chunks.add(c);
    return [...chunks].sort();
  }

  /** Deletes entities and relationships with their mentions (and relationships left dangling). */
  private removeFacts(scope: KbScope, entityIds: readonly string[], relationshipIds: readonly string[]): void {
    const dangling = entityIds.flatMap((id) => this.relationshipRowsTouching(scope, id).map((r) => String(r.id)));
    for (const id of new Set([...relationshipIds, ...dangling])) {
      this.db.prepare('DELETE FROM relationship_mentions WHERE relationship_id = ? AND tenant_id = ? AND kb_id = ?').run(id, scope.tenantId, scope.kbId);
      this.db.prepare('DELETE FROM relationships WHERE id = ? AND tenant_id = ? AND kb_id = ?').run(id, scope.tenantId, scope.kbId);
    }
    for (const id of entityIds) {
      this.db.prepare('DELETE FROM entity_mentions WHERE entity_id = ? AND tenant_id = ? AND kb_id = ?').run(id, scope.tenantId, scope.kbId);
      this.db.prepare('DELETE FROM entities WHERE id = ? AND tenant_id = ? AND kb_id = ?').run(id, scope.tenantId, scope.kbId);
    }
  }

  /** Manual links of a merged entity move to the target (a link between the two disappears). */
  private repointManual(relationships: readonly Row[], sourceId: string, targetId: string): void {
    for (const r of relationships) {
      const from = r.source_id === sourceId ? targetId : String(r.source_id);
      const to = r.target_id === sourceId ? targetId : String(r.target_id);
      if (from === to) this.db.prepare('DELETE FROM relationships WHERE id = ?').run(String(r.id));
      else this.db.prepare('UPDATE relationships SET source_id = ?, target_id = ? WHERE id = ?').run(from, to, String(r.id));
    }
  }

  private tombstone(scope: KbScope, kind: 'entity' | 'relationship', id: string, editId: string): void {
    this.db
      .prepare(
        `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, deleted_by) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, kb_id, target_kind, target_id) DO UPDATE SET deleted_by = excluded.deleted_by`,
      )
      .run(scope.tenantId, scope.kbId, kind, id, editId);
  }

  private overlayRow(scope: KbScope, kind: 'entity' | 'relationship', id: string): OverlayRow | null {
    return toOverlayRow(
      this.db.prepare('SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id = ?').get(scope.tenantId, scope.kbId, kind, id) as Row | undefined,
    );
  }

  /** Writes a target's overrides, keeping its tombstone; null clears them. */
  private saveOverlay(scope: KbScope, kind: 'entity' | 'relationship', id: string, o: OverlayRow | null): void {
    const v = o ?? emptyOverlay();
    this.db
      .prepare(
        `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, name, normalized_name, type, description, label, weight) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, kb_id, target_kind, target_id) DO UPDATE SET name = excluded.name, normalized_name = excluded.normalized_name,
           type = excluded.type, description = excluded.description, label = excluded.label, weight = excluded.weight`,
      )
      .run(scope.tenantId, scope.kbId, kind, id, v.name, v.normalizedName, v.type, v.description, v.label, v.weight);
  }

  private entityRow(scope: KbScope, id: string): Row | undefined {
    return this.db.prepare(`SELECT ${ENTITY_ROW} FROM entities WHERE id = ? AND tenant_id = ? AND kb_id = ?`).get(id, scope.tenantId, scope.kbId) as Row | undefined;
  }

  private requireEntity(scope: KbScope, id: string): Row {
    const row = this.entityRow(scope, id);
    if (row !== undefined) return row;
    const merge = this.db
      .prepare('SELECT id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND undone_at IS NULL')
      .get(scope.tenantId, scope.kbId, id) as Row | undefined;
    throw merge ? mergedAway(id, merge) : entityNotFound(id);
  }

  private requireRelationship(scope: KbScope, id: string): Row {
    const row = this.db.prepare(`SELECT ${RELATIONSHIP_ROW} FROM relationships WHERE id = ? AND tenant_id = ? AND kb_id = ?`).get(id, scope.tenantId, scope.kbId) as Row | undefined;
    if (row === undefined) throw relationshipNotFound(id);
    return row;
  }

  private relationshipRowsTouching(scope: KbScope, entityId: string): Row[] {
    return this.db
      .prepare(`SELECT ${RELATIONSHIP_ROW} FROM relationships WHERE tenant_id = ? AND kb_id = ? AND (source_id = ? OR target_id = ?) ORDER BY id`)
      .all(scope.tenantId, scope.kbId, entityId, entityId) as Row[];
  }

  private logEdit(scope: KbScope, meta: GraphEditMeta, action: GraphEditAction, targetIds: string[], before: unknown, after: unknown, undo: UndoState): void {
    this.db
      .prepare(
        `INSERT INTO graph_edits (tenant_id, kb_id, id, actor, action, target_ids, before_state, after_state, undo_state, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(scope.tenantId, scope.kbId, meta.id, meta.actor, action, JSON.stringify(targetIds), JSON.stringify(before), JSON.stringify(after), JSON.stringify(undo), meta.at);
  }
}

/** What undo needs, per action: restorable rows, previous overrides, or the created entity. */
interface UndoState {
  rows?: string;
  overlay?: OverlayRow | null;
  row?: Record<string, unknown>;
  entityId?: string;
}

function emptyOverlay(): OverlayRow {
  return { name: null, normalizedName: null, type: null, description: null, label: null, weight: null };
}

function toSnapshot(entities: readonly Row[], relationships: readonly Row[]): RowSnapshot {
  return toRowSnapshot(entities, relationships, (v) => (v === null || v === undefined ? null : bufferToVector(v as Buffer)));
}
