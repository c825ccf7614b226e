import type { KbScope } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '../records';
import { encodeChunkExtraction, overlayIsEmpty, relationshipKey, rewriteChunkWrites, settleRelationships } from '../graph-overlay';
import type { OverlayState } from '../graph-overlay';
import { toOverlayRow } from '../graph-edit-rows';
import type { SqlSession } from '../sql/sql-session';
import { batches, marks } from './mysql-rows';

/** The overlay's hooks in the MySQL chunk write (see graph-overlay.ts). */

export async function loadOverlay(tx: SqlSession, scope: KbScope): Promise<OverlayState> {
  const params = [scope.tenantId, scope.kbId];
  const tombstones = await tx.rows('SELECT target_kind, target_id, deleted_by FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND deleted_by IS NOT NULL', params);
  const merges = await tx.rows('SELECT id, source_id, target_id FROM graph_merges WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL', params);
  const deleted = (kind: string) => new Map(tombstones.filter((t) => t.target_kind === kind).map((t) => [String(t.target_id), String(t.deleted_by)]));
  return {
    deletedEntities: deleted('entity'),
    deletedRelationships: deleted('relationship'),
    merges: new Map(merges.map((m) => [String(m.source_id), { targetId: String(m.target_id), editId: String(m.id) }])),
  };
}

/**
 * Applies tombstones and merges to one chunk's writes and records the original writes for
 * every edit involved, so its undo can replay them. A write from outside (not a replay)
 * replaces what earlier versions of the chunk recorded.
 */
export async function rewriteChunk(
  tx: SqlSession,
  scope: KbScope,
  chunkId: string,
  entities: readonly EntityMentionWrite[],
  relationships: readonly RelationshipMentionWrite[],
  replay: boolean,
): Promise<{ entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[] }> {
  const state = await settledOverlay(tx, scope, entities, relationships);
  // Without tombstones or merges no edit has records to keep.
  if (overlayIsEmpty(state)) return { entities: [...entities], relationships: [...relationships] };
  if (!replay) await tx.exec('DELETE FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id = ?', [scope.tenantId, scope.kbId, chunkId]);
  const rewritten = rewriteChunkWrites(state, entities, relationships);
  const existing = new Map<string, string>();
  for (const r of rewritten.relationships.filter((w) => w.rewired)) {
    const [row] = await tx.rows('SELECT id FROM relationships WHERE tenant_id = ? AND kb_id = ? AND source_id = ? AND target_id = ? AND label = ? ORDER BY id LIMIT 1', [
      scope.tenantId,
      scope.kbId,
      r.sourceId,
      r.targetId,
      r.label,
    ]);
    if (row !== undefined) existing.set(relationshipKey(r.sourceId, r.targetId, r.label), String(row.id));
  }
  const settled = settleRelationships(state, rewritten, existing);
  const original = encodeChunkExtraction({ entities: [...entities], relationships: [...relationships] });
  for (const editId of [...rewritten.editIds].sort()) {
    await tx.exec(
      `INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE extraction = VALUES(extraction)`,
      [scope.tenantId, scope.kbId, editId, chunkId, original],
    );
  }
  return { entities: rewritten.entities, relationships: settled };
}

/**
 * The overlay as it stands once this transaction holds the rows the chunk names (entities,
 * relationships, their overlay rows). A merge, deletion or undo locks the rows it changes, so
 * locking them here waits for one in flight; reading the overlay again afterwards sees what it
 * committed (READ COMMITTED). Without this, a write that read the overlay just before a merge
 * committed would bring the merged entity back.
 */
async function settledOverlay(
  tx: SqlSession,
  scope: KbScope,
  entities: readonly EntityMentionWrite[],
  relationships: readonly RelationshipMentionWrite[],
): Promise<OverlayState> {
  let state = await loadOverlay(tx, scope);
  for (let attempt = 0; attempt < 3; attempt++) {
    const entityIds = new Set(entities.map((e) => e.entityId));
    for (const id of [...entityIds]) for (let m = state.merges.get(id); m !== undefined && !entityIds.has(m.targetId); m = state.merges.get(m.targetId)) entityIds.add(m.targetId);
    const relationshipIds = relationships.map((r) => r.relationshipId);
    await lockIds(tx, scope, 'entities', [...entityIds]);
    await lockIds(tx, scope, 'relationships', relationshipIds);
    // An undone deletion has no row to lock; its tombstone row is what the undo changes.
    await lockOverlayRows(tx, scope, 'entity', [...entityIds]);
    await lockOverlayRows(tx, scope, 'relationship', relationshipIds);
    const again = await loadOverlay(tx, scope);
    if (overlayFingerprint(again) === overlayFingerprint(state)) return again;
    state = again;
  }
  return state;
}

async function lockIds(tx: SqlSession, scope: KbScope, table: 'entities' | 'relationships', ids: readonly string[]): Promise<void> {
  for (const batch of batches([...new Set(ids)].sort())) {
    await tx.rows(`SELECT id FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)}) ORDER BY id FOR UPDATE`, [scope.tenantId, scope.kbId, ...batch]);
  }
}

async function lockOverlayRows(tx: SqlSession, scope: KbScope, kind: 'entity' | 'relationship', ids: readonly string[]): Promise<void> {
  for (const batch of batches([...new Set(ids)].sort())) {
    await tx.rows(`SELECT target_id FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id IN (${marks(batch)}) ORDER BY target_id FOR UPDATE`, [
      scope.tenantId,
      scope.kbId,
      kind,
      ...batch,
    ]);
  }
}

function overlayFingerprint(state: OverlayState): string {
  const entries = (m: ReadonlyMap<string, unknown>) => JSON.stringify([...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  return `${entries(state.deletedEntities)}|${entries(state.deletedRelationships)}|${entries(state.merges)}`;
}

/** Re-applies user overrides to rows whose derived values were just recomputed. */
export async function applyOverrides(tx: SqlSession, scope: KbScope, touched: { entityIds: ReadonlySet<string>; relationshipIds: ReadonlySet<string> }): Promise<void> {
  for (const [kind, ids] of [['entity', touched.entityIds], ['relationship', touched.relationshipIds]] as const) {
    for (const batch of batches([...ids])) {
      const rows = await tx.rows(`SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id IN (${marks(batch)})`, [
        scope.tenantId,
        scope.kbId,
        kind,
        ...batch,
      ]);
      for (const row of rows) {
        const o = toOverlayRow(row)!;
        const id = String(row.target_id);
        if (kind === 'entity') {
          await tx.exec(
            `UPDATE entities SET name = COALESCE(?, name), normalized_name = COALESCE(?, normalized_name), type = COALESCE(?, type),
             description = COALESCE(?, description) WHERE tenant_id = ? AND kb_id = ? AND id = ?`,
            [o.name, o.normalizedName, o.type, o.description, scope.tenantId, scope.kbId, id],
          );
        } else {
          await tx.exec('UPDATE relationships SET label = COALESCE(?, label), description = COALESCE(?, description), weight = COALESCE(?, weight) WHERE tenant_id = ? AND kb_id = ? AND id = ?', [
            o.label,
            o.description,
            o.weight,
            scope.tenantId,
            scope.kbId,
            id,
          ]);
        }
      }
    }
  }
}
