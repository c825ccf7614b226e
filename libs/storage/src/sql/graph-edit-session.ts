import type { KbScope } from '@trellis/contracts';
import { encodeChunkExtraction, encodeRowSnapshot, entityNotFound, mergedAway, relationshipNotFound } from '@trellis/graph';
import type { GraphEditAction, GraphEditMeta, RecordedChunkExtraction } from '@trellis/graph';
import { toOverlayRow, toRecordedChunkExtraction, toRowSnapshot } from '../graph-edit-rows';
import type { OverlayRow } from '../graph-edit-rows';
import { marks } from '../row-mappers';
import type { Row } from '../row-mappers';
import type { SqlDialect } from './sql-dialect';
import { takeInserted } from './sql-dialect';
import type { SqlSession } from './sql-session';

export const GRAPH_EDIT_TABLES = ['graph_overlays', 'graph_merges', 'graph_edit_chunks', 'graph_edits'] as const;
const ENTITY_ROW = 'id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding';
const RELATIONSHIP_ROW = 'id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding';
const OVERLAY_COLUMNS = ['name', 'normalized_name', 'type', 'description', 'label', 'weight'];

/** What undo needs, per action: restorable rows, previous overrides, or the created entity. */
export interface UndoState {
  rows?: string;
  overlay?: OverlayRow | null;
  row?: Record<string, unknown>;
  entityId?: string;
}

export function emptyOverlay(): OverlayRow {
  return { name: null, normalizedName: null, type: null, description: null, label: null, weight: null };
}

/**
 * The rows one graph edit reads and writes, inside the edit's transaction (the model is in
 * @trellis/graph's graph-overlay.ts). Where transactions run concurrently, rows an edit reads
 * are locked FOR UPDATE.
 */
export class GraphEditSession {
  constructor(
    readonly tx: SqlSession,
    readonly dialect: SqlDialect,
    readonly scope: KbScope,
  ) {}

  get key(): [string, string] {
    return [this.scope.tenantId, this.scope.kbId];
  }

  async entityRow(id: string): Promise<Row | undefined> {
    const [row] = await this.tx.rows(`SELECT ${ENTITY_ROW} FROM entities WHERE ${this.dialect.byIdScope()} AND id = ?${this.dialect.forUpdate}`, [...this.key, id]);
    return row;
  }

  async requireEntity(id: string): Promise<Row> {
    const row = await this.entityRow(id);
    if (row !== undefined) return row;
    const [merge] = await this.tx.rows('SELECT id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND undone_at IS NULL', [...this.key, id]);
    throw merge ? mergedAway(id, String(merge.target_id), String(merge.id)) : entityNotFound(id);
  }

  async requireRelationship(id: string): Promise<Row> {
    const [row] = await this.tx.rows(`SELECT ${RELATIONSHIP_ROW} FROM relationships WHERE ${this.dialect.byIdScope()} AND id = ?${this.dialect.forUpdate}`, [...this.key, id]);
    if (row === undefined) throw relationshipNotFound(id);
    return row;
  }

  relationshipRowsTouching(entityId: string): Promise<Row[]> {
    return this.tx.rows(
      `SELECT ${RELATIONSHIP_ROW} FROM relationships WHERE tenant_id = ? AND kb_id = ? AND (source_id = ? OR target_id = ?) ORDER BY id${this.dialect.forUpdate}`,
      [...this.key, entityId, entityId],
    );
  }

  /** Chunk writers lock the rows they name before settling on the overlay: holding them makes a concurrent write wait for this edit. */
  async lockEntities(ids: readonly string[]): Promise<void> {
    if (!this.dialect.locksRows || ids.length === 0) return;
    await this.tx.rows(`SELECT id FROM entities WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(ids)}) ORDER BY id FOR UPDATE`, [...this.key, ...ids]);
  }

  async overlayRow(kind: 'entity' | 'relationship', id: string): Promise<OverlayRow | null> {
    const [row] = await this.tx.rows(`SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id = ?${this.dialect.forUpdate}`, [...this.key, kind, id]);
    return toOverlayRow(row);
  }

  /** Writes a target's overrides, keeping its tombstone; null clears them. */
  async saveOverlay(kind: 'entity' | 'relationship', id: string, o: OverlayRow | null): Promise<void> {
    const v = o ?? emptyOverlay();
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, ${OVERLAY_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ${this.dialect.onConflictUpdate(takeInserted(this.dialect, OVERLAY_COLUMNS))}`,
      [...this.key, kind, id, v.name, v.normalizedName, v.type, v.description, v.label, v.weight],
    );
  }

  async tombstone(kind: 'entity' | 'relationship', id: string, editId: string): Promise<void> {
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, deleted_by) VALUES (?, ?, ?, ?, ?) ${this.dialect.onConflictUpdate(takeInserted(this.dialect, ['deleted_by']))}`,
      [...this.key, kind, id, editId],
    );
  }

  async chunksOf(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<string[]> {
    const chunks = new Set<string>();
    for (const [table, column, ids] of [['entity_mentions', 'entity_id', entityIds], ['relationship_mentions', 'relationship_id', relationshipIds]] as const) {
      if (ids.length === 0) continue;
      const rows = await this.tx.rows(`SELECT chunk_id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${column} IN (${marks(ids)})`, [...this.key, ...ids]);
      for (const r of rows) chunks.add(String(r.chunk_id));
    }
    return [...chunks].sort();
  }

  /** A chunk's writes as the store holds them now (mention names and descriptions, row types and embeddings). */
  async reconstruct(chunkId: string): Promise<RecordedChunkExtraction> {
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
    return toRecordedChunkExtraction(entities, relationships, (v) => this.dialect.readEmbedding(v) ?? new Float32Array(0));
  }

  /** Records each affected chunk's current writes for the edit; returns the rows to restore. */
  async recordChunks(editId: string, entityIds: string[], relationships: Row[], entities: Row[]): Promise<string> {
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

  toSnapshot(entities: readonly Row[], relationships: readonly Row[]) {
    return toRowSnapshot(entities, relationships, (v) => this.dialect.readEmbedding(v));
  }

  /** Deletes entities and relationships with their mentions (and relationships left dangling). */
  async removeFacts(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<void> {
    const dangling: string[] = [];
    for (const id of entityIds) for (const r of await this.relationshipRowsTouching(id)) dangling.push(String(r.id));
    for (const id of new Set([...relationshipIds, ...dangling])) {
      await this.tx.exec('DELETE FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND relationship_id = ?', [...this.key, id]);
      await this.tx.exec(`DELETE FROM relationships WHERE ${this.dialect.byIdScope()} AND id = ?`, [...this.key, id]);
    }
    for (const id of entityIds) {
      await this.tx.exec('DELETE FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id = ?', [...this.key, id]);
      await this.tx.exec(`DELETE FROM entities WHERE ${this.dialect.byIdScope()} AND id = ?`, [...this.key, id]);
    }
  }

  async logEdit(meta: GraphEditMeta, action: GraphEditAction, targetIds: string[], before: unknown, after: unknown, undo: UndoState): Promise<void> {
    await this.tx.exec(
      'INSERT INTO graph_edits (tenant_id, kb_id, id, actor, action, target_ids, before_state, after_state, undo_state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [...this.key, meta.id, meta.actor, action, JSON.stringify(targetIds), JSON.stringify(before), JSON.stringify(after), JSON.stringify(undo), this.dialect.time(meta.at)],
    );
  }
}
