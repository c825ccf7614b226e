import type { v1 } from '@trellis/contracts';
import type { EntityRecord, RelationshipRecord } from './records';

/** An entity as the gRPC API shows it (graph reads and graph retrieval alike). */
export function toEntityMessage(e: EntityRecord): v1.Entity {
  return { id: e.id, name: e.name, type: e.type, description: e.description, mentionCount: e.mentionCount, needsReview: e.needsReview };
}

/** A relationship as the gRPC API shows it, with the chunks that state it. */
export function toRelationshipMessage(r: RelationshipRecord, chunkIds: readonly string[]): v1.Relationship {
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
