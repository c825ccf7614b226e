import { STRUCTURAL_ACTIONS, alreadyUndone, blockedByLaterEdits, decodeChunkExtraction, decodeRowSnapshot, editNotFound, laterEditsBlockingUndo } from '@trellis/graph';
import type { GraphEditAction, GraphEditMeta, GraphEditRecord, Touched } from '@trellis/graph';
import { toGraphEdit } from '../graph-edit-rows';
import { marks } from '../row-mappers';
import type { GraphEditSession, UndoState } from './graph-edit-session';
import { takeInserted } from './sql-dialect';
import { refreshDerived, writeChunkExtraction } from './graph-write-sql';

/**
 * Undoes one graph edit inside the caller's transaction. Refused while a later structural
 * edit touches the same entities (undo that first), and for an edit already undone.
 */
export async function undoEdit(s: GraphEditSession, editId: string, meta: GraphEditMeta): Promise<GraphEditRecord> {
  const [row] = await s.tx.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND id = ?${s.dialect.forUpdate}`, [...s.key, editId]);
  if (row === undefined) throw editNotFound(editId);
  const edit = toGraphEdit(row);
  if (edit.undoneAt !== null) throw alreadyUndone(editId);
  // Holding the targets' rows makes a concurrent chunk write wait for this undo and then see it.
  await s.lockEntities([...edit.targetIds].sort());
  const active = (
    await s.tx.rows(`SELECT * FROM graph_edits WHERE tenant_id = ? AND kb_id = ? AND undone_at IS NULL AND action IN (${marks(STRUCTURAL_ACTIONS)})`, [
      ...s.key,
      ...STRUCTURAL_ACTIONS,
    ])
  ).map(toGraphEdit);
  const blocking = laterEditsBlockingUndo(edit, active);
  if (blocking.length > 0) throw blockedByLaterEdits(blocking);
  await revert(s, edit, JSON.parse(String(row.undo_state)) as UndoState, meta.at);
  await s.tx.exec('UPDATE graph_edits SET undone_at = ?, undone_by = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [s.dialect.time(meta.at), meta.actor, ...s.key, editId]);
  return { ...edit, undoneAt: meta.at, undoneBy: meta.actor };
}

async function revert(s: GraphEditSession, edit: GraphEditRecord, undo: UndoState, at: string): Promise<void> {
  const action: GraphEditAction = edit.action;
  const byId = `WHERE ${s.dialect.byIdScope()} AND id = ?`;
  switch (action) {
    case 'merge-entities':
      await s.tx.exec('UPDATE graph_merges SET undone_at = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?', [s.dialect.time(at), ...s.key, edit.id]);
      return restoreAndReplay(s, edit.id, undo.rows!);
    case 'delete-entity':
    case 'delete-relationship':
      await s.tx.exec('UPDATE graph_overlays SET deleted_by = NULL WHERE tenant_id = ? AND kb_id = ? AND deleted_by = ?', [...s.key, edit.id]);
      return restoreAndReplay(s, edit.id, undo.rows!);
    case 'update-entity': {
      const id = edit.targetIds[0]!;
      await s.saveOverlay('entity', id, undo.overlay ?? null);
      const r = undo.row as { name: string; normalizedName: string; type: string; description: string };
      await s.tx.exec(`UPDATE entities SET name = ?, normalized_name = ?, type = ?, description = ? ${byId}`, [r.name, r.normalizedName, r.type, r.description, ...s.key, id]);
      return refreshDerived(s.tx, s.dialect, s.scope, { entityIds: new Set([id]), relationshipIds: new Set() });
    }
    case 'update-relationship': {
      const id = edit.targetIds[0]!;
      await s.saveOverlay('relationship', id, undo.overlay ?? null);
      const r = undo.row as { label: string; description: string; weight: number };
      await s.tx.exec(`UPDATE relationships SET label = ?, description = ?, weight = ? ${byId}`, [r.label, r.description, r.weight, ...s.key, id]);
      return refreshDerived(s.tx, s.dialect, s.scope, { entityIds: new Set(), relationshipIds: new Set([id]) });
    }
    case 'create-synopsis': {
      const id = undo.entityId!;
      return s.removeFacts([id], (await s.relationshipRowsTouching(id)).map((r) => String(r.id)));
    }
  }
}

/**
 * Puts back the rows mentions cannot rebuild (ids, types, embeddings, manual rows), then
 * replays the recorded writes of every chunk that still exists: the graph is re-derived as if
 * the edit had never been made, including chunks indexed since.
 */
async function restoreAndReplay(s: GraphEditSession, editId: string, encodedRows: string): Promise<void> {
  const { tx, dialect, key } = s;
  const snapshot = decodeRowSnapshot(encodedRows);
  const touched: Touched = { entityIds: new Set(), relationshipIds: new Set() };
  const vector = (v: Float32Array | null) => (v === null ? null : dialect.embeddingValue(v));
  const entityColumns = ['name', 'normalized_name', 'type', 'description', 'kind', 'embedding'];
  for (const e of snapshot.entities) {
    await tx.exec(
      `INSERT INTO entities (tenant_id, kb_id, id, ${entityColumns.join(', ')}, mention_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
       ${dialect.onConflictUpdate(takeInserted(dialect, entityColumns))}`,
      [...key, e.id, e.name, e.normalizedName, e.type, e.description, e.kind, vector(e.embedding)],
    );
    touched.entityIds.add(e.id);
  }
  const relationshipColumns = ['source_id', 'target_id', 'label', 'description', 'weight', 'kind', 'embedding'];
  for (const r of snapshot.relationships) {
    if ((await s.entityRow(r.sourceId)) === undefined || (await s.entityRow(r.targetId)) === undefined) continue;
    await tx.exec(
      `INSERT INTO relationships (tenant_id, kb_id, id, ${relationshipColumns.join(', ')}, mention_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)
       ${dialect.onConflictUpdate(takeInserted(dialect, relationshipColumns))}`,
      [...key, r.id, r.sourceId, r.targetId, r.label, r.description, r.weight, r.kind, vector(r.embedding)],
    );
    touched.relationshipIds.add(r.id);
  }
  const recorded = (await tx.rows('SELECT chunk_id, extraction FROM graph_edit_chunks WHERE tenant_id = ? AND kb_id = ? AND edit_id = ? ORDER BY chunk_id', [...key, editId])).map(
    (r) => [String(r.chunk_id), decodeChunkExtraction(String(r.extraction))] as const,
  );
  // A relationship first written while the edit was active got moved ends; replay recreates it.
  for (const [, x] of recorded) {
    for (const r of x.relationships) {
      const [row] = await tx.rows(`SELECT source_id, target_id FROM relationships WHERE ${dialect.byIdScope()} AND id = ?`, [...key, r.relationshipId]);
      if (row !== undefined && (String(row.source_id) !== r.sourceId || String(row.target_id) !== r.targetId)) await s.removeFacts([], [r.relationshipId]);
    }
  }
  for (const [chunkId, x] of recorded) await writeChunkExtraction(tx, dialect, s.scope, chunkId, x.entities, x.relationships, true);
  await refreshDerived(tx, dialect, s.scope, touched);
}
