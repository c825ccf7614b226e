import type { KbScope } from '@trellis/contracts';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from '@trellis/graph';
import type { EntityRecord, RelationshipRecord } from '../records';

/**
 * Manual graph edits. Edits are overlays on the derived graph and survive re-indexing:
 * overrides are re-applied after every recomputation, tombstones and merges rewrite every later
 * chunk write, manual entities and relationships are never derived away. Each edit is one
 * transaction and one row of the edit log (`edit` names it). Unknown ids throw NOT_FOUND; an
 * entity merged away throws FAILED_PRECONDITION.
 */
export interface GraphEditRepository {
  /** Overrides name (with its normalised form), type or description. */
  updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord>;
  /** Overrides label, description or weight (negative: kept out of retrieval). */
  updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord>;
  /** Removes the entity with its relationships; later extractions of it are dropped. */
  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void>;
  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void>;
  /** Creates an entity by hand with relationships to existing entities (a synopsis). */
  createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord>;
  /**
   * Moves the source's mentions, relationships (duplicates combined) and provenance to the
   * target and deletes the source; later mentions of the source go to the target. Merging an
   * entity into itself, or an entity merged away, is FAILED_PRECONDITION. Resolves the target.
   */
  mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord>;
  /**
   * Reverts an edit: a merge or deletion restores the rows and replays the recorded writes of
   * every affected chunk that still exists (those indexed while the edit was active too).
   * FAILED_PRECONDITION when already undone, or while a later merge or deletion touches the
   * same ids (undo that first). `edit` says who undoes and when.
   */
  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord>;
  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null>;
  /** Newest first. */
  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]>;
}
