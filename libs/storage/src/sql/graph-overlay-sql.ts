import type { KbScope } from '@trellis/contracts';
import { encodeChunkExtraction, entitiesThroughMerges, overlayFingerprint, overlayIsEmpty, relationshipKey, rewriteChunkWrites, settleRelationships } from '@trellis/graph';
import type { EntityMentionWrite, OverlayState, RelationshipMentionWrite, Touched } from '@trellis/graph';
import { toOverlayRow } from '../graph-edit-rows';
import type { SqlDialect } from './sql-dialect';
import { takeInserted } from './sql-dialect';
import { rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

/** The overlay's hooks in the chunk write (see @trellis/graph's graph-overlay.ts), inside the write's transaction. */

async function loadOverlay(tx: SqlSession, scope: KbScope): Promise<OverlayState> {
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
  dialect: SqlDialect,
  scope: KbScope,
  chunkId: string,
  entities: readonly EntityMentionWrite[],
  relationships: readonly RelationshipMentionWrite[],
  replay: boolean,
): Promise<{ entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[] }> {
  const state = dialect.locksRows ? await settledOverlay(tx, scope, entities, relationships) : await loadOverlay(tx, scope);
  // Without tombstones or merges no edit has records to keep: the common case costs two reads.
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
      `INSERT INTO graph_edit_chunks (tenant_id, kb_id, edit_id, chunk_id, extraction) VALUES (?, ?, ?, ?, ?) ${dialect.onConflictUpdate(takeInserted(dialect, ['extraction']))}`,
      [scope.tenantId, scope.kbId, editId, chunkId, original],
    );
  }
  return { entities: rewritten.entities, relationships: settled };
}

/**
 * The overlay as it stands once this transaction holds the rows the chunk names (entities,
 * relationships, their overlay rows), where transactions run concurrently. A merge, deletion or
 * undo locks the rows it changes, so locking them here waits for one in flight; reading the
 * overlay again afterwards sees what it committed (READ COMMITTED). Without this, a write that
 * read the overlay just before a merge committed would bring the merged entity back.
 */
async function settledOverlay(
  tx: SqlSession,
  scope: KbScope,
  entities: readonly EntityMentionWrite[],
  relationships: readonly RelationshipMentionWrite[],
): Promise<OverlayState> {
  let state = await loadOverlay(tx, scope);
  for (let attempt = 0; attempt < 3; attempt++) {
    const entityIds = entitiesThroughMerges(state, entities.map((e) => e.entityId));
    const relationshipIds = relationships.map((r) => r.relationshipId);
    await lockIds(tx, scope, 'entities', 'id', '', [...entityIds]);
    await lockIds(tx, scope, 'relationships', 'id', '', relationshipIds);
    // An undone deletion has no row to lock; its tombstone row is what the undo changes.
    await lockIds(tx, scope, 'graph_overlays', 'target_id', 'entity', [...entityIds]);
    await lockIds(tx, scope, 'graph_overlays', 'target_id', 'relationship', relationshipIds);
    const again = await loadOverlay(tx, scope);
    if (overlayFingerprint(again) === overlayFingerprint(state)) return again;
    state = again;
  }
  return state;
}

/** Locks rows by id in id order (MySQL family only); `kind` narrows graph_overlays to one target kind. */
async function lockIds(tx: SqlSession, scope: KbScope, table: string, column: string, kind: string, ids: readonly string[]): Promise<void> {
  const kindClause = kind === '' ? '' : ' AND target_kind = ?';
  const sql = (m: string) => `SELECT ${column} FROM ${table} WHERE tenant_id = ? AND kb_id = ?${kindClause} AND ${column} IN (${m}) ORDER BY ${column} FOR UPDATE`;
  await rowsWhereIn(tx, sql, [scope.tenantId, scope.kbId, ...(kind === '' ? [] : [kind])], [...new Set(ids)].sort());
}

/** Re-applies user overrides to rows whose derived values were just recomputed. */
export async function applyOverrides(tx: SqlSession, dialect: SqlDialect, scope: KbScope, touched: Touched): Promise<void> {
  const byId = `WHERE ${dialect.byIdScope()} AND id = ?`;
  for (const [kind, ids] of [['entity', touched.entityIds], ['relationship', touched.relationshipIds]] as const) {
    const sql = (m: string) => `SELECT * FROM graph_overlays WHERE tenant_id = ? AND kb_id = ? AND target_kind = ? AND target_id IN (${m})`;
    for (const row of await rowsWhereIn(tx, sql, [scope.tenantId, scope.kbId, kind], [...ids])) {
      const o = toOverlayRow(row)!;
      const key = [scope.tenantId, scope.kbId, String(row.target_id)];
      if (kind === 'entity') {
        await tx.exec(
          `UPDATE entities SET name = COALESCE(?, name), normalized_name = COALESCE(?, normalized_name), type = COALESCE(?, type), description = COALESCE(?, description) ${byId}`,
          [o.name, o.normalizedName, o.type, o.description, ...key],
        );
      } else {
        await tx.exec(`UPDATE relationships SET label = COALESCE(?, label), description = COALESCE(?, description), weight = COALESCE(?, weight) ${byId}`, [
          o.label,
          o.description,
          o.weight,
          ...key,
        ]);
      }
    }
  }
}
