import type { EntityMentionWrite, RelationshipMentionWrite } from './graph-records';

/** Entities and relationships a write touched: what their derived fields are recomputed for. */
export interface Touched {
  entityIds: Set<string>;
  relationshipIds: Set<string>;
}

/**
 * Manual graph edits are overlays on the graph derived from chunk mentions: tombstones and
 * merges rewrite every later chunk write (so re-extracting the same text neither resurrects a
 * deleted fact nor splits a merged entity again), and overrides are re-applied after every
 * recomputation. This module holds the rule itself: the rewrite of one chunk's writes (storage
 * applies it inside the chunk write's transaction; graph-edit-encoding.ts keeps what undo needs).
 */
export interface OverlayState {
  /** Deleted entity id → the edit that deleted it. */
  deletedEntities: ReadonlyMap<string, string>;
  deletedRelationships: ReadonlyMap<string, string>;
  /** Active merges: merged (source) entity id → its target and the merge edit. */
  merges: ReadonlyMap<string, { targetId: string; editId: string }>;
}

export const EMPTY_OVERLAY: OverlayState = { deletedEntities: new Map(), deletedRelationships: new Map(), merges: new Map() };

export function overlayIsEmpty(state: OverlayState): boolean {
  return state.deletedEntities.size === 0 && state.deletedRelationships.size === 0 && state.merges.size === 0;
}

/** These entities and every entity their merges lead to: what a chunk write must lock. */
export function entitiesThroughMerges(state: OverlayState, entityIds: Iterable<string>): Set<string> {
  const ids = new Set(entityIds);
  for (const id of [...ids]) for (let m = state.merges.get(id); m !== undefined && !ids.has(m.targetId); m = state.merges.get(m.targetId)) ids.add(m.targetId);
  return ids;
}

/** Identifies an overlay's state: a write re-reads it after locking until it stops changing. */
export function overlayFingerprint(state: OverlayState): string {
  const entries = (m: ReadonlyMap<string, unknown>) => JSON.stringify([...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
  return `${entries(state.deletedEntities)}|${entries(state.deletedRelationships)}|${entries(state.merges)}`;
}

/** A chunk's writes after the overlay, before relationships whose ends moved are matched. */
export interface RewrittenWrites {
  entities: EntityMentionWrite[];
  relationships: Array<RelationshipMentionWrite & { rewired: boolean }>;
  /** Edits that changed something in this chunk; each keeps the chunk's original writes for undo. */
  editIds: Set<string>;
}

/** Follows merges (A into B, B into C: A → C); records the merges it passes. */
function resolveEntity(state: OverlayState, id: string, editIds: Set<string>): string {
  let current = id;
  const seen = new Set<string>();
  for (let merge = state.merges.get(current); merge !== undefined && !seen.has(current); merge = state.merges.get(current)) {
    seen.add(current);
    editIds.add(merge.editId);
    current = merge.targetId;
  }
  return current;
}

/**
 * Applies tombstones and merges to one chunk's writes. A mention redirected by a merge carries
 * no name, so the target keeps the name its own mentions give it. Relationships whose ends
 * moved come back marked `rewired`: the adapter looks for an existing relationship with the
 * new ends and label, and `settleRelationships` folds them into it.
 */
export function rewriteChunkWrites(
  state: OverlayState,
  entities: readonly EntityMentionWrite[],
  relationships: readonly RelationshipMentionWrite[],
): RewrittenWrites {
  const editIds = new Set<string>();
  const byId = new Map<string, { write: EntityMentionWrite; redirected: boolean }>();
  for (const e of entities) {
    const id = resolveEntity(state, e.entityId, editIds);
    const deletedBy = state.deletedEntities.get(id);
    if (deletedBy !== undefined) {
      editIds.add(deletedBy);
      continue;
    }
    const redirected = id !== e.entityId;
    const existing = byId.get(id);
    // Two mentions of one entity in the chunk after a merge: the target's own mention wins.
    if (existing !== undefined && (redirected || !existing.redirected)) continue;
    byId.set(id, { write: redirected ? { ...e, entityId: id, name: '' } : e, redirected });
  }
  const rewritten: RewrittenWrites['relationships'] = [];
  for (const r of relationships) {
    const deletedBy = state.deletedRelationships.get(r.relationshipId);
    if (deletedBy !== undefined) {
      editIds.add(deletedBy);
      continue;
    }
    const sourceId = resolveEntity(state, r.sourceId, editIds);
    const targetId = resolveEntity(state, r.targetId, editIds);
    const goneEnd = state.deletedEntities.get(sourceId) ?? state.deletedEntities.get(targetId);
    if (goneEnd !== undefined) {
      editIds.add(goneEnd);
      continue;
    }
    if (sourceId === targetId) continue; // both ends merged into one entity: no self-loop
    const rewired = sourceId !== r.sourceId || targetId !== r.targetId;
    rewritten.push({ ...r, sourceId, targetId, rewired });
  }
  return { entities: [...byId.values()].map((v) => v.write), relationships: rewritten, editIds };
}

/** Key of a relationship's ends and label, for matching a rewired relationship to an existing one. */
export function relationshipKey(sourceId: string, targetId: string, label: string): string {
  return JSON.stringify([sourceId, targetId, label]);
}

/**
 * Gives rewired relationships the id of the existing relationship with the same ends and
 * label (duplicates combined), drops deleted ones, and keeps one write per id, preferring
 * one that was not rewired.
 */
export function settleRelationships(
  state: OverlayState,
  rewritten: RewrittenWrites,
  existingIds: ReadonlyMap<string, string>,
): RelationshipMentionWrite[] {
  const byId = new Map<string, { write: RelationshipMentionWrite; rewired: boolean }>();
  for (const { rewired, ...r } of rewritten.relationships) {
    const id = rewired ? (existingIds.get(relationshipKey(r.sourceId, r.targetId, r.label)) ?? r.relationshipId) : r.relationshipId;
    const deletedBy = state.deletedRelationships.get(id);
    if (deletedBy !== undefined) {
      rewritten.editIds.add(deletedBy);
      continue;
    }
    const existing = byId.get(id);
    if (existing !== undefined && (rewired || !existing.rewired)) continue;
    byId.set(id, { write: { ...r, relationshipId: id }, rewired });
  }
  return [...byId.values()].map((v) => v.write);
}
