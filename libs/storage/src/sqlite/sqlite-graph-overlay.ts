import type Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '../records';
import type { RecordedChunkExtraction } from '../graph-edit-records';
import { encodeChunkExtraction, overlayIsEmpty, relationshipKey, rewriteChunkWrites, settleRelationships } from '../graph-overlay';
import type { OverlayState, Touched } from '../graph-overlay';
import { toOverlayRow, toRecordedChunkExtraction } from '../graph-edit-rows';
import type { Row } from '../row-mappers';
import { bufferToVector } from '../vector-math';


/**
 * The overlay's part in the SQLite chunk write (see graph-overlay.ts): tombstones and merges
 * rewrite each chunk's writes, overrides are re-applied after each recomputation, and what a
 * chunk said is recorded for the edits that changed it. Runs inside the caller's transaction.
 */
export class SqliteGraphOverlay {
  constructor(private readonly db: Database.Database) {}

  /** Applies tombstones and merges to a chunk's writes and records the originals for undo. */
  rewrite(
    scope: KbScope,
    chunkId: string,
    entities: readonly EntityMentionWrite[],
    relationships: readonly RelationshipMentionWrite[],
    replay: boolean,
  ): { entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[] } {
    const state = this.state(scope);
    // Without tombstones or merges no edit has records to keep: the common case costs two reads.
    if (overlayIsEmpty(state)) return { entities: [...entities], relationships: [...relationships] };
    if (!replay) this.db.prepare('DELETE FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id = ?').run(scope.tenantId, scope.kbId, chunkId);
    const rewritten = rewriteChunkWrites(state, entities, relationships);
    const existing = new Map<string, string>();
    const find = this.db.prepare('SELECT id FROM relationships WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND target_id = ? AND label = ? ORDER BY id LIMIT 1').pluck();
    for (const r of rewritten.relationships.filter((w) => w.rewired)) {
      const id = find.get(scope.tenantId, scope.kbId, r.sourceId, r.targetId, r.label) as string | undefined;
      if (id !== undefined) existing.set(relationshipKey(r.sourceId, r.targetId, r.label), id);
    }
    const settled = settleRelationships(state, rewritten, existing);
    const record = this.db.prepare(
      `INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, kb_id, edit_id, chunk_id) DO UPDATE SET extraction = excluded.extraction`,
    );
    const original = encodeChunkExtraction({ entities: [...entities], relationships: [...relationships] });
    for (const editId of rewritten.editIds) record.run(scope.tenantId, scope.kbId, editId, chunkId, original);
    return { entities: rewritten.entities, relationships: settled };
  }

  /** Re-applies user overrides after the derived values of these rows were recomputed. */
  applyOverrides(scope: KbScope, touched: Touched): void {
    const overlay = this.db.prepare('SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id = ?');
    const updateEntity = this.db.prepare(
      `UPDATE entities SET name = COALESCE(?, name), normalized_name = COALESCE(?, normalized_name), type = COALESCE(?, type),
       description = COALESCE(?, description) WHERE id = ?`,
    );
    const updateRelationship = this.db.prepare('UPDATE relationships SET label = COALESCE(?, label), description = COALESCE(?, description), weight = COALESCE(?, weight) WHERE id = ?');
    for (const id of touched.entityIds) {
      const o = toOverlayRow(overlay.get(scope.tenantId, scope.kbId, 'entity', id) as Row | undefined);
      if (o) updateEntity.run(o.name, o.normalizedName, o.type, o.description, id);
    }
    for (const id of touched.relationshipIds) {
      const o = toOverlayRow(overlay.get(scope.tenantId, scope.kbId, 'relationship', id) as Row | undefined);
      if (o) updateRelationship.run(o.label, o.description, o.weight, id);
    }
  }

  private state(scope: KbScope): OverlayState {
    const tombstones = this.db
      .prepare('SELECT target_kind, target_id, deleted_by FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND deleted_by IS NOT NULL')
      .all(scope.tenantId, scope.kbId) as Array<{ target_kind: string; target_id: string; deleted_by: string }>;
    const merges = this.db
      .prepare('SELECT id, source_id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL')
      .all(scope.tenantId, scope.kbId) as Array<{ id: string; source_id: string; target_id: string }>;
    return {
      deletedEntities: new Map(tombstones.filter((t) => t.target_kind === 'entity').map((t) => [t.target_id, t.deleted_by])),
      deletedRelationships: new Map(tombstones.filter((t) => t.target_kind === 'relationship').map((t) => [t.target_id, t.deleted_by])),
      merges: new Map(merges.map((m) => [m.source_id, { targetId: m.target_id, editId: m.id }])),
    };
  }

  /** Chunks that are gone have nothing to replay. Runs inside the caller's transaction. */
  forgetChunks(scope: KbScope, chunkIds: readonly string[]): void {
    const forget = this.db.prepare('DELETE FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id = ?');
    for (const id of chunkIds) forget.run(scope.tenantId, scope.kbId, id);
  }

  /** A chunk's writes as the store holds them now (mention names and descriptions, row types and embeddings). */
  reconstruct(scope: KbScope, chunkId: string): RecordedChunkExtraction {
    const entities = this.db
      .prepare(
        `SELECT m.entity_id, m.name, m.description, m.needs_review, e.normalized_name, e.type, e.embedding FROM entity_mentions m JOIN entities e ON e.id = m.entity_id
         WHERE m.chunk_id = ? AND m.tenant_id = ? AND m.kb_id = ? ORDER BY m.entity_id`,
      )
      .all(chunkId, scope.tenantId, scope.kbId) as Row[];
    const relationships = this.db
      .prepare(
        `SELECT m.relationship_id, m.description, m.strength, r.source_id, r.target_id, r.label, r.embedding FROM relationship_mentions m
         JOIN relationships r ON r.id = m.relationship_id WHERE m.chunk_id = ? AND m.tenant_id = ? AND m.kb_id = ? ORDER BY m.relationship_id`,
      )
      .all(chunkId, scope.tenantId, scope.kbId) as Row[];
    const vector = (v: unknown) => (v === null || v === undefined ? new Float32Array(0) : bufferToVector(v as Buffer));
    return toRecordedChunkExtraction(entities, relationships, vector);
  }
}
