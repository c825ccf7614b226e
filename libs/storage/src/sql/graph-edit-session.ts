import type { KbScope } from '@trellis/contracts';
import { decodeChunkExtraction, encodeChunkExtraction, NO_OVERRIDES } from '@trellis/graph';
import type {
  EntityRowSnapshot,
  GraphEditAction,
  GraphEditMeta,
  GraphEditRecord,
  GraphEditRows,
  ManualEntityWrite,
  ManualRelationshipWrite,
  OverlayRow,
  RecordedChunkExtraction,
  RelationshipMentionWrite,
  RelationshipRowSnapshot,
  EntityMentionWrite,
  TargetKind,
  Touched,
  UndoState,
} from '@trellis/graph';
import { entityRowMapper, relationshipRowMapper, toGraphEdit, toOverlayRow, toRecordedChunkExtraction } from '../graph-edit-rows';
import { marks } from '../row-mappers';
import { recordEntityChanges, recordRelationshipChanges } from './community-change-sql';
import { applyOverrides } from './graph-overlay-sql';
import { syncEntityNameTerms } from './entity-name-terms-sql';
import { refreshDerived, writeChunkExtraction } from './graph-write-sql';
import type { SqlDialect } from './sql-dialect';
import { takeInserted } from './sql-dialect';
import type { SqlSession } from './sql-session';

export const GRAPH_EDIT_TABLES = ['graph_overlays', 'graph_merges', 'graph_edit_chunks', 'graph_edits'] as const;
const ENTITY_ROW = 'id, kb_id, name, normalized_name, type, description, mention_count, kind, embedding';
const RELATIONSHIP_ROW = 'id, kb_id, source_id, target_id, label, description, weight, mention_count, kind, embedding';
const OVERLAY_COLUMNS = ['name', 'normalized_name', 'type', 'description', 'label', 'weight'];
const ENTITY_COLUMNS = ['name', 'normalized_name', 'type', 'description', 'kind', 'embedding'];
const RELATIONSHIP_COLUMNS = ['source_id', 'target_id', 'label', 'description', 'weight', 'kind', 'embedding'];

/**
 * The rows of one graph edit, over SQL inside the edit's transaction: the GraphEditRows port
 * @trellis/graph's GraphEditor works on. Where transactions run concurrently, rows an edit
 * reads are locked FOR UPDATE.
 */
export class GraphEditSession implements GraphEditRows {
  constructor(
    private readonly tx: SqlSession,
    private readonly dialect: SqlDialect,
    private readonly scope: KbScope,
  ) {}

  private get key(): [string, string] {
    return [this.scope.tenantId, this.scope.kbId];
  }

  private get byId(): string {
    return `WHERE ${this.dialect.byIdScope()} AND id = ?`;
  }

  private readonly toEntityRow = entityRowMapper((value) => this.dialect.readEmbedding(value));
  private readonly toRelationshipRow = relationshipRowMapper((value) => this.dialect.readEmbedding(value));

  async entity(id: string) {
    const [row] = await this.tx.rows(`SELECT ${ENTITY_ROW} FROM entities ${this.byId}${this.dialect.forUpdate}`, [...this.key, id]);
    return row === undefined ? undefined : this.toEntityRow(row);
  }

  async activeMergeOf(entityId: string) {
    const [merge] = await this.tx.rows('SELECT id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND undone_at IS NULL', [...this.key, entityId]);
    return merge === undefined ? undefined : { editId: String(merge.id), targetId: String(merge.target_id) };
  }

  async relationship(id: string) {
    const [row] = await this.tx.rows(`SELECT ${RELATIONSHIP_ROW} FROM relationships ${this.byId}${this.dialect.forUpdate}`, [...this.key, id]);
    return row === undefined ? undefined : this.toRelationshipRow(row);
  }

  async relationshipEnds(id: string) {
    const [row] = await this.tx.rows(`SELECT source_id, target_id FROM relationships ${this.byId}`, [...this.key, id]);
    return row === undefined ? undefined : { sourceId: String(row.source_id), targetId: String(row.target_id) };
  }

  async relationshipsTouching(entityId: string) {
    const sql = `SELECT ${RELATIONSHIP_ROW} FROM relationships WHERE tenant_id = ? AND kb_id = ? AND (source_id = ? OR target_id = ?) ORDER BY id${this.dialect.forUpdate}`;
    return (await this.tx.rows(sql, [...this.key, entityId, entityId])).map((r) => this.toRelationshipRow(r));
  }

  /** Chunk writers lock the rows they name before settling on the overlay: holding them makes a concurrent write wait for this edit. */
  async lockEntities(ids: readonly string[]): Promise<void> {
    if (!this.dialect.locksRows || ids.length === 0) return;
    await this.tx.rows(`SELECT id FROM entities WHERE ${this.dialect.byIdScope()} AND id IN (${marks(ids)}) ORDER BY id FOR UPDATE`, [...this.key, ...ids]);
  }

  async overlay(kind: TargetKind, id: string): Promise<OverlayRow | null> {
    const [row] = await this.tx.rows(`SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id = ?${this.dialect.forUpdate}`, [...this.key, kind, id]);
    return toOverlayRow(row);
  }

  async saveOverlay(kind: TargetKind, id: string, o: OverlayRow | null): Promise<void> {
    const v = o ?? NO_OVERRIDES;
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, ${OVERLAY_COLUMNS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ${this.dialect.onConflictUpdate(takeInserted(this.dialect, OVERLAY_COLUMNS))}`,
      [...this.key, kind, id, v.name, v.normalizedName, v.type, v.description, v.label, v.weight],
    );
  }

  async applyOverrides(touched: Touched): Promise<void> {
    // An edited name, description or weight changes the content of the entities it touches.
    await this.recordEntities([...touched.entityIds]);
    await this.recordRelationships([...touched.relationshipIds]);
    await applyOverrides(this.tx, this.dialect, this.scope, touched);
    await this.syncNameTerms(touched.entityIds);
  }

  async tombstone(kind: TargetKind, id: string, editId: string): Promise<void> {
    await this.tx.exec(
      `INSERT INTO graph_overlays (tenant_id, kb_id, target_kind, target_id, deleted_by) VALUES (?, ?, ?, ?, ?) ${this.dialect.onConflictUpdate(takeInserted(this.dialect, ['deleted_by']))}`,
      [...this.key, kind, id, editId],
    );
  }

  async clearTombstones(editId: string): Promise<void> {
    await this.tx.exec('UPDATE graph_overlays SET deleted_by = NULL WHERE tenant_id = ? AND kb_id = ? AND deleted_by = ?', [...this.key, editId]);
  }

  async addMerge(editId: string, sourceId: string, targetId: string, at: string): Promise<void> {
    await this.tx.exec('INSERT INTO graph_merges (tenant_id, kb_id, id, source_id, target_id, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
      ...this.key,
      editId,
      sourceId,
      targetId,
      this.dialect.time(at),
    ]);
  }

  async endMerge(editId: string, at: string): Promise<void> {
    await this.tx.exec(`UPDATE graph_merges SET undone_at = ? WHERE ${this.dialect.byIdScope()} AND id = ?`, [this.dialect.time(at), ...this.key, editId]);
  }

  async chunksMentioning(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<string[]> {
    const chunks = new Set<string>();
    for (const [table, column, ids] of [['entity_mentions', 'entity_id', entityIds], ['relationship_mentions', 'relationship_id', relationshipIds]] as const) {
      if (ids.length === 0) continue;
      const rows = await this.tx.rows(`SELECT chunk_id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${column} IN (${marks(ids)})`, [...this.key, ...ids]);
      for (const r of rows) chunks.add(String(r.chunk_id));
    }
    return [...chunks].sort();
  }

  async chunkWrites(chunkId: string): Promise<RecordedChunkExtraction> {
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

  async recordChunkWrites(editId: string, chunkId: string, writes: RecordedChunkExtraction): Promise<void> {
    await this.tx.exec('INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?)', [
      ...this.key,
      editId,
      chunkId,
      encodeChunkExtraction(writes),
    ]);
  }

  async recordedChunkWrites(editId: string): Promise<Array<[string, RecordedChunkExtraction]>> {
    const rows = await this.tx.rows('SELECT chunk_id, extraction FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND edit_id = ? ORDER BY chunk_id', [...this.key, editId]);
    return rows.map((r) => [String(r.chunk_id), decodeChunkExtraction(String(r.extraction))]);
  }

  replayChunk(chunkId: string, entities: readonly EntityMentionWrite[], relationships: readonly RelationshipMentionWrite[]): Promise<boolean> {
    return writeChunkExtraction(this.tx, this.dialect, this.scope, chunkId, entities, relationships, true);
  }

  refreshDerived(touched: Touched): Promise<void> {
    return refreshDerived(this.tx, this.dialect, this.scope, touched);
  }

  async removeFacts(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<void> {
    const dangling: string[] = [];
    for (const id of entityIds) for (const r of await this.relationshipsTouching(id)) dangling.push(r.id);
    await this.recordRelationships([...relationshipIds, ...dangling]);
    await this.recordEntities(entityIds);
    for (const id of new Set([...relationshipIds, ...dangling])) {
      await this.tx.exec('DELETE FROM relationship_mentions WHERE tenant_id = ? AND kb_id = ? AND relationship_id = ?', [...this.key, id]);
      await this.tx.exec(`DELETE FROM relationships ${this.byId}`, [...this.key, id]);
    }
    for (const id of entityIds) {
      await this.tx.exec('DELETE FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id = ?', [...this.key, id]);
      await this.tx.exec(`DELETE FROM entities ${this.byId}`, [...this.key, id]);
    }
    await this.syncNameTerms(entityIds);
  }

  async insertManualEntity(e: ManualEntityWrite): Promise<void> {
    await this.recordEntities([e.id]);
    await this.tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type, description, mention_count, kind, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?)`,
      [...this.key, e.id, e.name, e.normalizedName, e.type, e.description, this.dialect.embeddingValue(e.embedding)],
    );
    await this.syncNameTerms([e.id]);
  }

  async insertManualRelationship(l: ManualRelationshipWrite): Promise<void> {
    await this.recordEntities([l.sourceId, l.targetId]);
    await this.tx.exec(
      `INSERT INTO relationships (tenant_id, kb_id, id, source_id, target_id, label, description, weight, mention_count, kind, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, 'manual', ?) ${this.dialect.onConflictKeep('mention_count')}`,
      [...this.key, l.id, l.sourceId, l.targetId, l.label, l.description, l.weight, this.dialect.embeddingValue(l.embedding)],
    );
  }

  async moveRelationship(id: string, sourceId: string, targetId: string): Promise<void> {
    // The ends it leaves and the ends it joins both change.
    await this.recordRelationships([id]);
    await this.recordEntities([sourceId, targetId]);
    await this.tx.exec(`UPDATE relationships SET source_id = ?, target_id = ? ${this.byId}`, [sourceId, targetId, ...this.key, id]);
  }

  async setEntityFields(id: string, f: { name: string; normalizedName: string; type: string; description: string }): Promise<void> {
    await this.recordEntities([id]);
    await this.tx.exec(`UPDATE entities SET name = ?, normalized_name = ?, type = ?, description = ? ${this.byId}`, [f.name, f.normalizedName, f.type, f.description, ...this.key, id]);
    await this.syncNameTerms([id]);
  }

  async setRelationshipFields(id: string, f: { label: string; description: string; weight: number }): Promise<void> {
    await this.recordRelationships([id]);
    await this.tx.exec(`UPDATE relationships SET label = ?, description = ?, weight = ? ${this.byId}`, [f.label, f.description, f.weight, ...this.key, id]);
  }

  async restoreEntity(e: EntityRowSnapshot): Promise<void> {
    await this.recordEntities([e.id]);
    await this.tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, ${ENTITY_COLUMNS.join(', ')}, mention_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
       ${this.dialect.onConflictUpdate(takeInserted(this.dialect, ENTITY_COLUMNS))}`,
      [...this.key, e.id, e.name, e.normalizedName, e.type, e.description, e.kind, this.embedding(e.embedding)],
    );
    await this.syncNameTerms([e.id]);
  }

  async restoreRelationship(r: RelationshipRowSnapshot): Promise<void> {
    await this.recordRelationships([r.id]);
    await this.recordEntities([r.sourceId, r.targetId]);
    await this.tx.exec(
      `INSERT INTO relationships (tenant_id, kb_id, id, ${RELATIONSHIP_COLUMNS.join(', ')}, mention_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
       ${this.dialect.onConflictUpdate(takeInserted(this.dialect, RELATIONSHIP_COLUMNS))}`,
      [...this.key, r.id, r.sourceId, r.targetId, r.label, r.description, r.weight, r.kind, this.embedding(r.embedding)],
    );
  }

  /** Edits change communities too (see community-change-sql.ts). */
  private recordEntities(ids: readonly string[]): Promise<void> {
    return recordEntityChanges(this.tx, this.dialect, this.scope, ids);
  }

  private recordRelationships(ids: readonly string[]): Promise<void> {
    return recordRelationshipChanges(this.tx, this.dialect, this.scope, ids);
  }

  /** After every write of entity rows here (refreshDerived and replays keep their own in line). */
  private syncNameTerms(ids: Iterable<string>): Promise<void> {
    return syncEntityNameTerms(this.tx, this.dialect, this.scope, ids);
  }

  async logEdit(meta: GraphEditMeta, action: GraphEditAction, targetIds: readonly string[], before: unknown, after: unknown, undo: UndoState): Promise<void> {
    await this.tx.exec(
      'INSERT INTO graph_edits (tenant_id, kb_id, id, actor, action, target_ids, before_state, after_state, undo_state, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      [...this.key, meta.id, meta.actor, action, JSON.stringify(targetIds), JSON.stringify(before), JSON.stringify(after), JSON.stringify(undo), this.dialect.time(meta.at)],
    );
  }

  async loggedEdit(editId: string): Promise<{ edit: GraphEditRecord; undo: UndoState } | undefined> {
    const [row] = await this.tx.rows(`SELECT * FROM graph_edits WHERE ${this.dialect.byIdScope()} AND id = ?${this.dialect.forUpdate}`, [...this.key, editId]);
    return row === undefined ? undefined : { edit: toGraphEdit(row), undo: JSON.parse(String(row.undo_state)) as UndoState };
  }

  async activeEdits(actions: readonly GraphEditAction[]): Promise<GraphEditRecord[]> {
    const sql = `SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL AND action IN (${marks(actions)})`;
    return (await this.tx.rows(sql, [...this.key, ...actions])).map(toGraphEdit);
  }

  async markUndone(editId: string, meta: GraphEditMeta): Promise<void> {
    await this.tx.exec(`UPDATE graph_edits SET undone_at = ?, undone_by = ? WHERE ${this.dialect.byIdScope()} AND id = ?`, [this.dialect.time(meta.at), meta.actor, ...this.key, editId]);
  }

  private embedding(v: Float32Array | null) {
    return v === null ? null : this.dialect.embeddingValue(v);
  }
}
