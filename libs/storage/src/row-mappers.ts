import type { IndexStatus, KbSettings } from '@trellis/contracts';
import { distinctDescriptions } from '@trellis/graph';
import type { PendingSummary } from '@trellis/graph';
import { PIPELINE_STAGES } from './records';
import type { ChunkRecord, DocumentRecord, EntityRecord, KnowledgeBaseRecord, PipelineStage, RelationshipRecord, StageRecord } from './records';
import type { StuckDocument } from './repositories/stuck-work';

/** Column lists of the store's queries, so every read maps the same shape. */
export const CHUNK_COLUMNS = 'id, kb_id, document_id, version, ordinal, text, heading, token_count, content_hash, status, error';
export const ENTITY_COLUMNS = 'id, kb_id, name, normalized_name, type, description, mention_count, needs_review';

/** Relationships with their end names; both ends are joined inside the same knowledge base. */
export const RELATIONSHIP_SELECT = `SELECT r.id, r.kb_id, r.source_id, r.target_id, s.name AS source_name, t.name AS target_name,
  r.label, r.description, r.weight, r.mention_count FROM relationships r
  JOIN entities s ON s.tenant_id = r.tenant_id AND s.kb_id = r.kb_id AND s.id = r.source_id
  JOIN entities t ON t.tenant_id = r.tenant_id AND t.kb_id = r.kb_id AND t.id = r.target_id`;

/** Chunks of their document's current version: the only ones search may return. */
export const CURRENT_CHUNKS = `chunks c JOIN documents d
  ON d.tenant_id = c.tenant_id AND d.kb_id = c.kb_id AND d.id = c.document_id AND d.version = c.version`;

/** `?, ?, ?` for an IN list. */
export function marks(values: readonly unknown[]): string {
  return values.map(() => '?').join(', ');
}

/** Splits an id list so no statement grows unbounded (SQLite also caps bound parameters). */
export function batches<T>(values: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/** `records` in the order of `ids`, skipping ids without one. */
export function inIdOrder<T extends { id: string }>(ids: readonly string[], records: readonly T[]): T[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

/** A result row of either SQL adapter: snake_case columns as the drivers return them. */
export type Row = Record<string, unknown>;

/** Times are ISO-8601 in the API; MySQL DATETIME text ('YYYY-MM-DD HH:MM:SS.mmm', UTC) is converted. */
export function fromSqlTime(value: unknown): string {
  const text = String(value);
  return text.includes('T') ? text : `${text.replace(' ', 'T')}Z`;
}

/** JSON columns arrive as text (the pool sets jsonStrings; MariaDB's JSON is text anyway). */
export function readJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

function nullableString(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

export function toKnowledgeBase(r: Row): KnowledgeBaseRecord {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    name: String(r.name),
    description: String(r.description),
    settings: readJson<KbSettings>(r.settings),
    createdAt: fromSqlTime(r.created_at),
  };
}

export function toDocument(r: Row): DocumentRecord {
  return {
    id: String(r.id),
    tenantId: String(r.tenant_id),
    kbId: String(r.kb_id),
    sourceUri: String(r.source_uri),
    filename: String(r.filename),
    mimeType: String(r.mime_type),
    contentHash: String(r.content_hash),
    version: Number(r.version),
    status: String(r.status) as IndexStatus,
    error: nullableString(r.error),
    sizeBytes: Number(r.size_bytes),
    metadata: readJson<Record<string, string>>(r.metadata),
    createdAt: fromSqlTime(r.created_at),
    updatedAt: fromSqlTime(r.updated_at),
  };
}

export function toChunk(r: Row): ChunkRecord {
  return {
    id: String(r.id),
    kbId: String(r.kb_id),
    documentId: String(r.document_id),
    version: Number(r.version),
    ordinal: Number(r.ordinal),
    text: String(r.text),
    heading: String(r.heading),
    tokenCount: Number(r.token_count),
    contentHash: String(r.content_hash),
    status: String(r.status) as IndexStatus,
    error: nullableString(r.error),
  };
}

export function toEntity(r: Row): EntityRecord {
  return {
    id: String(r.id),
    kbId: String(r.kb_id),
    name: String(r.name),
    normalizedName: String(r.normalized_name),
    type: String(r.type),
    description: String(r.description),
    mentionCount: Number(r.mention_count),
    needsReview: Number(r.needs_review ?? 0) === 1,
  };
}

export function toRelationship(r: Row): RelationshipRecord {
  return {
    id: String(r.id),
    kbId: String(r.kb_id),
    sourceId: String(r.source_id),
    targetId: String(r.target_id),
    sourceName: String(r.source_name),
    targetName: String(r.target_name),
    label: String(r.label),
    description: String(r.description),
    weight: Number(r.weight),
    mentionCount: Number(r.mention_count),
  };
}

export function toStage(r: Row): StageRecord {
  const startedAt = fromSqlTime(r.started_at);
  const finishedAt = fromSqlTime(r.finished_at);
  return {
    stage: String(r.stage) as PipelineStage,
    startedAt,
    finishedAt,
    durationMs: Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt)),
    events: Number(r.events),
    failures: Number(r.failures),
    lastError: nullableString(r.last_error),
  };
}

/** A row the sweeper found waiting too long, of the document `documentId` (the row's own id, or its chunk's document). */
export function toStuckWork(r: Row, documentId: string): StuckDocument {
  return {
    tenantId: String(r.tenant_id),
    kbId: String(r.kb_id),
    documentId,
    version: Number(r.version),
    status: String(r.status) as IndexStatus,
    contentHash: String(r.content_hash),
    redriveCount: Number(r.redrive_count),
    updatedAt: fromSqlTime(r.updated_at),
  };
}

/** Stages in pipeline order. */
export function byPipelineOrder(a: StageRecord, b: StageRecord): number {
  return PIPELINE_STAGES.indexOf(a.stage) - PIPELINE_STAGES.indexOf(b.stage);
}

/**
 * Pending entity rows (id, name, type, summary_hash) and relationship rows (id, label,
 * summary_hash, source_name, target_name) as summaries to compute; `descriptionsOf` gives a
 * row's mention descriptions in chunk order.
 */
export function toPendingSummaries(
  entities: readonly Row[],
  relationships: readonly Row[],
  descriptionsOf: (kind: PendingSummary['kind'], id: string) => readonly string[],
): PendingSummary[] {
  return [
    ...entities.map((r) => ({
      kind: 'entity' as const,
      id: String(r.id),
      summaryHash: String(r.summary_hash),
      heading: `${String(r.name)} (${String(r.type)})`,
      descriptions: distinctDescriptions(descriptionsOf('entity', String(r.id))),
    })),
    ...relationships.map((r) => ({
      kind: 'relationship' as const,
      id: String(r.id),
      summaryHash: String(r.summary_hash),
      heading: `${String(r.source_name)} ${String(r.label)} ${String(r.target_name)}`,
      descriptions: distinctDescriptions(descriptionsOf('relationship', String(r.id))),
    })),
  ];
}
