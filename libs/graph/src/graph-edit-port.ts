import type { EntityMentionWrite, RelationshipMentionWrite } from './graph-records';
import type { GraphEditAction, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RecordedChunkExtraction } from './graph-edit-records';
import type { EntityRowSnapshot, RelationshipRowSnapshot } from './graph-edit-encoding';
import type { Touched } from './graph-overlay';

export type TargetKind = 'entity' | 'relationship';

/** An entity or relationship row as an edit reads it. */
export interface EntityRow extends EntityRowSnapshot {
  mentionCount: number;
}

export interface RelationshipRow extends RelationshipRowSnapshot {
  mentionCount: number;
}

/** The overrides of one target, as stored (null: not overridden). */
export interface OverlayRow {
  name: string | null;
  normalizedName: string | null;
  type: string | null;
  description: string | null;
  label: string | null;
  weight: number | null;
}

export const NO_OVERRIDES: OverlayRow = { name: null, normalizedName: null, type: null, description: null, label: null, weight: null };

/** What undo needs, per action: restorable rows, previous overrides, or the created entity. */
export interface UndoState {
  rows?: string;
  overlay?: OverlayRow | null;
  row?: Record<string, unknown>;
  entityId?: string;
}

/**
 * The rows one graph edit reads and writes, all inside the edit's transaction (storage
 * implements it over SQL). Where transactions run concurrently, rows an edit reads are locked
 * FOR UPDATE, and chunk writers lock the rows they name before settling on the overlay, so a
 * concurrent chunk write waits for the edit and then sees it.
 */
export interface GraphEditRows {
  entity(id: string): Promise<EntityRow | undefined>;
  /** The active merge that moved `entityId` away, if any. */
  activeMergeOf(entityId: string): Promise<{ editId: string; targetId: string } | undefined>;
  relationship(id: string): Promise<RelationshipRow | undefined>;
  /** Unlocked: where a relationship's ends are now. */
  relationshipEnds(id: string): Promise<{ sourceId: string; targetId: string } | undefined>;
  relationshipsTouching(entityId: string): Promise<RelationshipRow[]>;
  lockEntities(ids: readonly string[]): Promise<void>;

  overlay(kind: TargetKind, id: string): Promise<OverlayRow | null>;
  /** Writes a target's overrides, keeping its tombstone; null clears them. */
  saveOverlay(kind: TargetKind, id: string, overlay: OverlayRow | null): Promise<void>;
  /** Re-applies the overrides of these targets to their rows. */
  applyOverrides(touched: Touched): Promise<void>;
  tombstone(kind: TargetKind, id: string, editId: string): Promise<void>;
  clearTombstones(editId: string): Promise<void>;
  addMerge(editId: string, sourceId: string, targetId: string, at: string): Promise<void>;
  endMerge(editId: string, at: string): Promise<void>;

  /** Chunks whose mentions name these entities or relationships, in id order. */
  chunksMentioning(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<string[]>;
  /** A chunk's writes as the store holds them now. */
  chunkWrites(chunkId: string): Promise<RecordedChunkExtraction>;
  recordChunkWrites(editId: string, chunkId: string, writes: RecordedChunkExtraction): Promise<void>;
  recordedChunkWrites(editId: string): Promise<Array<[string, RecordedChunkExtraction]>>;
  /** Re-applies recorded writes through the overlay, as a replay (false: the chunk is gone). */
  replayChunk(chunkId: string, entities: readonly EntityMentionWrite[], relationships: readonly RelationshipMentionWrite[]): Promise<boolean>;
  /** Recomputes derived fields from the mentions that remain, then the overrides. */
  refreshDerived(touched: Touched): Promise<void>;

  /** Deletes entities and relationships with their mentions (and relationships left dangling). */
  removeFacts(entityIds: readonly string[], relationshipIds: readonly string[]): Promise<void>;
  insertManualEntity(entity: ManualEntityWrite): Promise<void>;
  /** Keeps an existing relationship's mention count. */
  insertManualRelationship(link: ManualRelationshipWrite): Promise<void>;
  moveRelationship(id: string, sourceId: string, targetId: string): Promise<void>;
  setEntityFields(id: string, fields: { name: string; normalizedName: string; type: string; description: string }): Promise<void>;
  setRelationshipFields(id: string, fields: { label: string; description: string; weight: number }): Promise<void>;
  /** Puts back rows as a snapshot holds them (mention counts are recomputed). */
  restoreEntity(row: EntityRowSnapshot): Promise<void>;
  restoreRelationship(row: RelationshipRowSnapshot): Promise<void>;

  logEdit(meta: GraphEditMeta, action: GraphEditAction, targetIds: readonly string[], before: unknown, after: unknown, undo: UndoState): Promise<void>;
  /** An edit of the log with what its undo needs, locked. */
  loggedEdit(editId: string): Promise<{ edit: GraphEditRecord; undo: UndoState } | undefined>;
  activeEdits(actions: readonly GraphEditAction[]): Promise<GraphEditRecord[]>;
  markUndone(editId: string, meta: GraphEditMeta): Promise<void>;
}
