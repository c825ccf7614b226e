import type * as v1 from './generated/index.trellis.v1';

/**
 * The graph's records as the gRPC API shows them, beside the generated types they fill: graph
 * reads (graph-store) and graph retrieval (retrieval) answer with the same messages. The
 * parameters are structural, so any record with these fields maps (extra fields are dropped).
 */

/** An entity as the gRPC API shows it. */
export function toEntityMessage(e: v1.Entity): v1.Entity {
  return { id: e.id, name: e.name, type: e.type, description: e.description, mentionCount: e.mentionCount, needsReview: e.needsReview };
}

/** What a relationship record holds of the message (its ends are named sourceId / targetId). */
export type RelationshipFields = Omit<v1.Relationship, 'sourceEntityId' | 'targetEntityId' | 'chunkIds'> & { sourceId: string; targetId: string };

/** A relationship as the gRPC API shows it, with the chunks that state it. */
export function toRelationshipMessage(r: RelationshipFields, chunkIds: readonly string[]): v1.Relationship {
  return {
    id: r.id,
    sourceEntityId: r.sourceId,
    targetEntityId: r.targetId,
    sourceName: r.sourceName,
    targetName: r.targetName,
    label: r.label,
    description: r.description,
    weight: r.weight,
    chunkIds: [...chunkIds],
  };
}
