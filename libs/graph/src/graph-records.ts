/**
 * The graph's facts as the domain writes them: mentions (what one chunk says about an entity
 * or relationship) and the summaries derived from them. Storage persists these; the rules that
 * produce and rewrite them live in this library.
 */

/** An entity mention resolved to its graph id, ready to write. */
export interface EntityMentionWrite {
  entityId: string;
  name: string;
  normalizedName: string;
  type: string;
  description: string;
  /** Used when the entity row is first created, until its summary is embedded. */
  embedding: Float32Array;
  /** The chunk only names the entity (an extracted entity marked needsReview). */
  needsReview?: boolean;
}

export interface RelationshipMentionWrite {
  relationshipId: string;
  sourceId: string;
  targetId: string;
  label: string;
  description: string;
  strength: number;
  embedding: Float32Array;
}

/**
 * An entity or relationship whose mentions changed since its summary and embedding were last
 * computed. `summaryHash` identifies the mentions' state; saving is refused once it moved on.
 */
export interface PendingSummary {
  kind: 'entity' | 'relationship';
  id: string;
  summaryHash: string;
  /** "name (type)" or "source label target": what an LLM summary is told the item is. */
  heading: string;
  /** For a relationship, what its heading's vector is made of (see relationshipItem). */
  headingParts?: readonly string[];
  /** Distinct mention descriptions, in chunk order. */
  descriptions: string[];
}

export interface SummaryUpdate {
  kind: 'entity' | 'relationship';
  id: string;
  summaryHash: string;
  description: string;
  embedding: Float32Array;
}
