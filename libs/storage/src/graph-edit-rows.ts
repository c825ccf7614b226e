import type { EntityRow, GraphEditAction, GraphEditRecord, OverlayRow, RecordedChunkExtraction, RelationshipRow } from '@trellis/graph';
import { fromSqlTime } from './row-mappers';
import type { Row } from './row-mappers';

/** Mapping of the graph edits' rows to the records of @trellis/graph. */

export function toGraphEdit(r: Row): GraphEditRecord {
  return {
    id: String(r.id),
    kbId: String(r.kb_id),
    actor: String(r.actor),
    action: String(r.action) as GraphEditAction,
    targetIds: JSON.parse(String(r.target_ids)) as string[],
    before: String(r.before_state),
    after: String(r.after_state),
    createdAt: fromSqlTime(r.created_at),
    undoneAt: r.undone_at === null || r.undone_at === undefined ? null : fromSqlTime(r.undone_at),
    undoneBy: r.undone_by === null || r.undone_by === undefined ? null : String(r.undone_by),
  };
}

export function toOverlayRow(r: Row | undefined): OverlayRow | null {
  if (r === undefined) return null;
  const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
  return {
    name: text(r.name),
    normalizedName: text(r.normalized_name),
    type: text(r.type),
    description: text(r.description),
    label: text(r.label),
    weight: r.weight === null || r.weight === undefined ? null : Number(r.weight),
  };
}

/**
 * A chunk's writes as the store holds them (mention rows joined with their entity and
 * relationship rows), in the form an undo replays. `vector` decodes the adapter's embeddings.
 */
export function toRecordedChunkExtraction(entities: readonly Row[], relationships: readonly Row[], vector: (value: unknown) => Float32Array): RecordedChunkExtraction {
  return {
    entities: entities.map((e) => ({
      entityId: String(e.entity_id),
      name: String(e.name),
      normalizedName: String(e.normalized_name),
      type: String(e.type),
      description: String(e.description),
      needsReview: Number(e.needs_review) === 1,
      embedding: vector(e.embedding),
    })),
    relationships: relationships.map((r) => ({
      relationshipId: String(r.relationship_id),
      sourceId: String(r.source_id),
      targetId: String(r.target_id),
      label: String(r.label),
      description: String(r.description),
      strength: Number(r.strength),
      embedding: vector(r.embedding),
    })),
  };
}

/** An entity or relationship row as an edit reads it. `vector` decodes the adapter's embeddings. */
export function toEntityRow(e: Row, vector: (value: unknown) => Float32Array | null): EntityRow {
  return {
    id: String(e.id),
    name: String(e.name),
    normalizedName: String(e.normalized_name),
    type: String(e.type),
    description: String(e.description),
    kind: String(e.kind),
    embedding: vector(e.embedding),
    mentionCount: Number(e.mention_count),
  };
}

export function toRelationshipRow(r: Row, vector: (value: unknown) => Float32Array | null): RelationshipRow {
  return {
    id: String(r.id),
    sourceId: String(r.source_id),
    targetId: String(r.target_id),
    label: String(r.label),
    description: String(r.description),
    weight: Number(r.weight),
    kind: String(r.kind),
    embedding: vector(r.embedding),
    mentionCount: Number(r.mention_count),
  };
}
