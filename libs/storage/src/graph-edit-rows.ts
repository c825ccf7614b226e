import type { EntityRow, GraphEditAction, GraphEditRecord, OverlayRow, RecordedChunkExtraction, RelationshipRow } from '@trellis/graph';
import { json, nullableNum, nullableText, nullableTime, num, rowMapper, text, time } from './row-mappers';
import type { Read, Row } from './row-mappers';

/** Mapping of the graph edits' rows to the records of @trellis/graph. */

export const toGraphEdit = rowMapper<GraphEditRecord>({
  id: text, kbId: text, actor: text, action: text as Read<GraphEditAction>, targetIds: json<string[]>(), before: ['before_state', text], after: ['after_state', text],
  createdAt: time, undoneAt: nullableTime, undoneBy: nullableText,
});

const overlayRow = rowMapper<OverlayRow>({ name: nullableText, normalizedName: nullableText, type: nullableText, description: nullableText, label: nullableText, weight: nullableNum });

export function toOverlayRow(r: Row | undefined): OverlayRow | null {
  return r === undefined ? null : overlayRow(r);
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

/** Entity rows as an edit reads them; `vector` decodes the adapter's embeddings. */
export function entityRowMapper(vector: Read<Float32Array | null>): (r: Row) => EntityRow {
  return rowMapper<EntityRow>({ id: text, name: text, normalizedName: text, type: text, description: text, kind: text, embedding: vector, mentionCount: num });
}

/** Relationship rows as an edit reads them; `vector` decodes the adapter's embeddings. */
export function relationshipRowMapper(vector: Read<Float32Array | null>): (r: Row) => RelationshipRow {
  return rowMapper<RelationshipRow>({ id: text, sourceId: text, targetId: text, label: text, description: text, weight: num, kind: text, embedding: vector, mentionCount: num });
}
