import { decodeRowSnapshot } from './graph-edit-encoding';
import { STRUCTURAL_ACTIONS, alreadyUndone, blockedByLaterEdits, editNotFound, laterEditsBlockingUndo } from './graph-edit-policy';
import type { GraphEditMeta, GraphEditRecord } from './graph-edit-records';
import type { GraphEditRows, UndoState } from './graph-edit-port';
import type { Touched } from './graph-overlay';

/**
 * Undoes one graph edit over the rows of the caller's transaction. Refused while a later
 * structural edit touches the same entities (undo that first), and for an edit already undone.
 */
export async function undoEdit(rows: GraphEditRows, editId: string, meta: GraphEditMeta): Promise<GraphEditRecord> {
  const logged = await rows.loggedEdit(editId);
  if (logged === undefined) throw editNotFound(editId);
  const { edit, undo } = logged;
  if (edit.undoneAt !== null) throw alreadyUndone(editId);
  // Holding the targets' rows makes a concurrent chunk write wait for this undo and then see it.
  await rows.lockEntities([...edit.targetIds].sort());
  const blocking = laterEditsBlockingUndo(edit, await rows.activeEdits(STRUCTURAL_ACTIONS));
  if (blocking.length > 0) throw blockedByLaterEdits(blocking);
  await revert(rows, edit, undo, meta.at);
  await rows.markUndone(editId, meta);
  return { ...edit, undoneAt: meta.at, undoneBy: meta.actor };
}

async function revert(rows: GraphEditRows, edit: GraphEditRecord, undo: UndoState, at: string): Promise<void> {
  switch (edit.action) {
    case 'merge-entities':
      await rows.endMerge(edit.id, at);
      return restoreAndReplay(rows, edit.id, undo.rows!);
    case 'delete-entity':
    case 'delete-relationship':
      await rows.clearTombstones(edit.id);
      return restoreAndReplay(rows, edit.id, undo.rows!);
    case 'update-entity': {
      const id = edit.targetIds[0]!;
      await rows.saveOverlay('entity', id, undo.overlay ?? null);
      await rows.setEntityFields(id, undo.row as { name: string; normalizedName: string; type: string; description: string });
      return rows.refreshDerived({ entityIds: new Set([id]), relationshipIds: new Set() });
    }
    case 'update-relationship': {
      const id = edit.targetIds[0]!;
      await rows.saveOverlay('relationship', id, undo.overlay ?? null);
      await rows.setRelationshipFields(id, undo.row as { label: string; description: string; weight: number });
      return rows.refreshDerived({ entityIds: new Set(), relationshipIds: new Set([id]) });
    }
    case 'create-synopsis': {
      const id = undo.entityId!;
      return rows.removeFacts([id], (await rows.relationshipsTouching(id)).map((r) => r.id));
    }
  }
}

/**
 * Puts back the rows mentions cannot rebuild (ids, types, embeddings, manual rows), then
 * replays the recorded writes of every chunk that still exists: the graph is re-derived as if
 * the edit had never been made, including chunks indexed since.
 */
async function restoreAndReplay(rows: GraphEditRows, editId: string, encodedRows: string): Promise<void> {
  const snapshot = decodeRowSnapshot(encodedRows);
  const touched: Touched = { entityIds: new Set(), relationshipIds: new Set() };
  for (const e of snapshot.entities) {
    await rows.restoreEntity(e);
    touched.entityIds.add(e.id);
  }
  for (const r of snapshot.relationships) {
    if ((await rows.entity(r.sourceId)) === undefined || (await rows.entity(r.targetId)) === undefined) continue;
    await rows.restoreRelationship(r);
    touched.relationshipIds.add(r.id);
  }
  const recorded = await rows.recordedChunkWrites(editId);
  // A relationship first written while the edit was active got moved ends; replay recreates it.
  for (const [, x] of recorded) {
    for (const r of x.relationships) {
      const ends = await rows.relationshipEnds(r.relationshipId);
      if (ends !== undefined && (ends.sourceId !== r.sourceId || ends.targetId !== r.targetId)) await rows.removeFacts([], [r.relationshipId]);
    }
  }
  for (const [chunkId, x] of recorded) await rows.replayChunk(chunkId, x.entities, x.relationships);
  await rows.refreshDerived(touched);
}
