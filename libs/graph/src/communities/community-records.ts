/**
 * Communities of a knowledge base's entity graph: groups of closely related entities found by
 * community detection, in levels (0 the finest; each level groups the one below), each with a
 * report. Storage persists these; the rules that produce them live in this library.
 */

/** What detection and reports read of an entity (storage's EntityRecord fits). */
export interface CommunityEntity {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly description: string;
}

/** What detection and reports read of a relationship (storage's RelationshipRecord fits). */
export interface CommunityRelationship {
  readonly id: string;
  readonly sourceId: string;
  readonly targetId: string;
  readonly sourceName: string;
  readonly targetName: string;
  readonly label: string;
  readonly description: string;
  readonly weight: number;
}

/** A relationship central to a community, with the chunks that state it. */
export interface KeyFact {
  readonly text: string;
  readonly relationshipId: string;
  readonly chunkIds: readonly string[];
}

/** How a report was written: by the language model, or composed from the graph. */
export type ReportKind = 'llm' | 'extractive';

export interface CommunityReport {
  readonly title: string;
  readonly summary: string;
  readonly keyFacts: readonly KeyFact[];
  readonly kind: ReportKind;
}

/** A community as stored: membership, parent link, report and the report's embedding. */
export interface CommunityRecord extends CommunityReport {
  readonly id: string;
  readonly level: number;
  /** The community of the next level up that contains this one; null at the top. */
  readonly parentId: string | null;
  /** Entities of the community (at every level: all the entities below it). */
  readonly memberIds: readonly string[];
  /** Hash of the members' content (names, descriptions, relationships): what the report was written from. */
  readonly contentHash: string;
  /** The embedding of "title: summary" (empty when none was computed). */
  readonly embedding: Float32Array;
  readonly updatedAt: string;
}

export type CommunityWrite = Omit<CommunityRecord, 'updatedAt'>;

/** A knowledge base's communities replaced: rows to write (members included) and ids that no longer exist. */
export interface CommunityChanges {
  readonly upserts: readonly CommunityWrite[];
  readonly removedIds: readonly string[];
  /** The change records the refresh started from: removed with the save (see CommunityChangeLog). */
  readonly consumedChanges?: readonly CommunityChangeMark[];
}

/** One entity's record of change: `version` counts its changes, so a later change outlives this mark. */
export interface CommunityChangeMark {
  readonly entityId: string;
  readonly version: number;
}

/**
 * The entities that changed since the last refresh: every entity whose name, type, description
 * or relationships changed was recorded in the transaction of its change. `tracked` is false
 * when that does not hold for the whole time since the last refresh (communities never built,
 * or built before changes were recorded): the refresh must then read the whole graph.
 */
export interface CommunityChangeLog {
  readonly tracked: boolean;
  readonly marks: readonly CommunityChangeMark[];
}
