import type { EntityMentionWrite, RelationshipMentionWrite } from './graph-records';
import type { EntityFields, RecordedChunkExtraction, RelationshipFields } from './graph-edit-records';

/**
 * What an edit keeps so that its undo can rebuild the graph: every affected chunk's original
 * writes, and the rows mentions cannot rebuild. Stored as JSON text, embeddings as base64.
 */

function vectorToBase64(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

function base64ToVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer);
}

export function encodeChunkExtraction(x: RecordedChunkExtraction): string {
  return JSON.stringify({
    entities: x.entities.map((e) => ({ ...e, embedding: vectorToBase64(e.embedding) })),
    relationships: x.relationships.map((r) => ({ ...r, embedding: vectorToBase64(r.embedding) })),
  });
}

export function decodeChunkExtraction(text: string): RecordedChunkExtraction {
  const raw = JSON.parse(text) as {
    entities: Array<Omit<EntityMentionWrite, 'embedding'> & { embedding: string }>;
    relationships: Array<Omit<RelationshipMentionWrite, 'embedding'> & { embedding: string }>;
  };
  return {
    entities: raw.entities.map((e) => ({ ...e, embedding: base64ToVector(e.embedding) })),
    relationships: raw.relationships.map((r) => ({ ...r, embedding: base64ToVector(r.embedding) })),
  };
}

/** An entity or relationship row as undo restores it (what mentions cannot rebuild). */
export interface EntityRowSnapshot extends EntityFields {
  kind: string;
  embedding: Float32Array | null;
}

export interface RelationshipRowSnapshot extends RelationshipFields {
  kind: string;
  embedding: Float32Array | null;
}

export interface RowSnapshot {
  entities: EntityRowSnapshot[];
  relationships: RelationshipRowSnapshot[];
}

export function encodeRowSnapshot(s: RowSnapshot): string {
  const vec = (v: Float32Array | null) => (v === null ? null : vectorToBase64(v));
  return JSON.stringify({
    entities: s.entities.map((e) => ({ ...e, embedding: vec(e.embedding) })),
    relationships: s.relationships.map((r) => ({ ...r, embedding: vec(r.embedding) })),
  });
}

export function decodeRowSnapshot(text: string): RowSnapshot {
  const raw = JSON.parse(text) as {
    entities: Array<Omit<EntityRowSnapshot, 'embedding'> & { embedding: string | null }>;
    relationships: Array<Omit<RelationshipRowSnapshot, 'embedding'> & { embedding: string | null }>;
  };
  const vec = (v: string | null) => (v === null ? null : base64ToVector(v));
  return {
    entities: raw.entities.map((e) => ({ ...e, embedding: vec(e.embedding) })),
    relationships: raw.relationships.map((r) => ({ ...r, embedding: vec(r.embedding) })),
  };
}
