import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { GraphEditAction } from './graph-edit-records';

/**
 * When a graph edit is refused, and how the refusal reads: a missing target is NOT_FOUND, a
 * target hidden by an earlier edit (merged away, already undone, a later edit depending on it)
 * is FAILED_PRECONDITION, so the caller knows which edit to undo first.
 */

/** Edits that move facts between entities or hide them: undo replays chunk writes for them. */
export const STRUCTURAL_ACTIONS: readonly GraphEditAction[] = ['merge-entities', 'delete-entity', 'delete-relationship'];

/** Edit ids are sortable by time: undo refuses while a later edit depends on the same targets. */
export function laterEditsBlockingUndo(
  edit: { id: string; createdAt: string; targetIds: readonly string[] },
  activeStructuralEdits: ReadonlyArray<{ id: string; createdAt: string; targetIds: readonly string[] }>,
): string[] {
  const targets = new Set(edit.targetIds);
  return activeStructuralEdits
    .filter((e) => e.id !== edit.id && (e.createdAt > edit.createdAt || (e.createdAt === edit.createdAt && e.id > edit.id)))
    .filter((e) => e.targetIds.some((t) => targets.has(t)))
    .map((e) => e.id);
}

export function mergedAway(entityId: string, targetId: string, mergeEditId: string): TrellisError {
  return new TrellisError(ErrorCode.FailedPrecondition, `entity ${entityId} was merged into ${targetId} (edit ${mergeEditId}); undo that merge first`);
}

export function entityNotFound(entityId: string): TrellisError {
  return TrellisError.notFound(`entity ${entityId} not found`);
}

export function relationshipNotFound(relationshipId: string): TrellisError {
  return TrellisError.notFound(`relationship ${relationshipId} not found`);
}

export function entityExists(entityId: string): TrellisError {
  return new TrellisError(ErrorCode.AlreadyExists, `entity ${entityId} already exists`);
}

export function selfMerge(): TrellisError {
  return new TrellisError(ErrorCode.FailedPrecondition, 'an entity cannot be merged into itself');
}

export function editNotFound(editId: string): TrellisError {
  return TrellisError.notFound(`graph edit ${editId} not found`);
}

export function alreadyUndone(editId: string): TrellisError {
  return new TrellisError(ErrorCode.FailedPrecondition, `graph edit ${editId} was already undone`);
}

export function blockedByLaterEdits(blocking: readonly string[]): TrellisError {
  return new TrellisError(ErrorCode.FailedPrecondition, `undo the later edits ${blocking.join(', ')} first: they touch the same entities`);
}
