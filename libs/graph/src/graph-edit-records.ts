import type { EntityMentionWrite, RelationshipMentionWrite } from './graph-records';

/** What a manual graph edit did; one row of the edit log per edit. */
export type GraphEditAction =
  | 'update-entity'
  | 'delete-entity'
  | 'update-relationship'
  | 'delete-relationship'
  | 'merge-entities'
  | 'create-synopsis';

/** Who makes an edit and when; the id names the edit in the log and in undo. */
export interface GraphEditMeta {
  id: string;
  actor: string;
  at: string;
}

export interface GraphEditRecord {
  id: string;
  kbId: string;
  actor: string;
  action: GraphEditAction;
  /** Entity and relationship ids the edit is about (for a merge: source, then target). */
  targetIds: string[];
  /** Short JSON summaries of the targets before and after the edit. */
  before: string;
  after: string;
  createdAt: string;
  undoneAt: string | null;
  undoneBy: string | null;
}

/** Fields a user sets on an entity; absent fields keep the derived (or earlier edited) value. */
export interface EntityPatch {
  name?: string;
  /** Set together with `name`, so lookups by the new name find the entity. */
  normalizedName?: string;
  type?: string;
  description?: string;
}

export interface RelationshipPatch {
  label?: string;
  description?: string;
  /** A negative weight keeps the relationship in the graph but out of every retrieval path. */
  weight?: number;
}

/** What an entity row holds besides its kind, embedding and what mentions derive. */
export interface EntityFields {
  id: string;
  name: string;
  normalizedName: string;
  type: string;
  description: string;
}

export interface RelationshipFields {
  id: string;
  sourceId: string;
  targetId: string;
  label: string;
  description: string;
  weight: number;
}

/** An entity created by hand (a synopsis): it has no mentions and is never derived away. */
export interface ManualEntityWrite extends EntityFields {
  embedding: Float32Array;
}

export interface ManualRelationshipWrite extends RelationshipFields {
  embedding: Float32Array;
}

/** What one chunk said about the graph before any edit rewrote it; replayed by undo. */
export interface RecordedChunkExtraction {
  entities: EntityMentionWrite[];
  relationships: RelationshipMentionWrite[];
}
