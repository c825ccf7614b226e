import type { IndexStatus, KbSettings } from '@trellis/contracts';
import { distinctDescriptions, entityHeading, relationshipItem } from '@trellis/graph';
import type { PendingSummary } from '@trellis/graph';
import { PIPELINE_STAGES } from './records';
import type { ChunkRecord, DocumentRecord, EntityNode, EntityRecord, KnowledgeBaseRecord, PipelineStage, RelationshipEdge, RelationshipRecord, StageRecord } from './records';
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

/** Code-unit order, which for our ASCII ids is the binary collation's order: the lock order. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

/** How one field of a record is read from its column's value. */
export type Read<T> = (value: unknown) => T;

export const text: Read<string> = (v) => String(v);
export const num: Read<number> = (v) => Number(v);
export const time: Read<string> = fromSqlTime;
export const nullableText: Read<string | null> = (v) => (v === null || v === undefined ? null : String(v));
export const nullableNum: Read<number | null> = (v) => (v === null || v === undefined ? null : Number(v));
export const nullableTime: Read<string | null> = (v) => (v === null || v === undefined ? null : fromSqlTime(v));
export const flag: Read<boolean> = (v) => Number(v ?? 0) === 1;
export const json = <T>(): Read<T> => readJson<T>;

/**
 * A row mapper with one reader per field of the record: a field reads the column its name spells
 * in snake_case (`kbId` reads `kb_id`), or the column named beside its reader.
 */
export function rowMapper<T>(fields: { [K in keyof T]-?: Read<T[K]> | readonly [column: string, read: Read<T[K]>] }): (r: Row) => T {
  const columns = Object.entries(fields as Record<string, Read<unknown> | readonly [string, Read<unknown>]>).map(([field, spec]) =>
    typeof spec === 'function' ? ([field, field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), spec] as const) : ([field, spec[0], spec[1]] as const),
  );
  return (r) => {
    const record: Record<string, unknown> = {};
    for (const [field, column, read] of columns) record[field] = read(r[column]);
    return record as T;
  };
}

export const toKnowledgeBase = rowMapper<KnowledgeBaseRecord>({ id: text, tenantId: text, name: text, description: text, settings: json<KbSettings>(), createdAt: time });

export const toDocument = rowMapper<DocumentRecord>({
  id: text, tenantId: text, kbId: text, sourceUri: text, filename: text, mimeType: text, contentHash: text, version: num,
  status: text as Read<IndexStatus>, error: nullableText, sizeBytes: num, metadata: json<Record<string, string>>(), title: text, createdAt: time, updatedAt: time,
});

export const toChunk = rowMapper<ChunkRecord>({
  id: text, kbId: text, documentId: text, version: num, ordinal: num, text, heading: text, tokenCount: num, contentHash: text,
  status: text as Read<IndexStatus>, error: nullableText,
});

export const ENTITY_NODE_COLUMNS = 'id, name, normalized_name, mention_count';

export const toEntityNode = rowMapper<EntityNode>({ id: text, name: text, normalizedName: text, mentionCount: num });

export const toEntity = rowMapper<EntityRecord>({ id: text, kbId: text, name: text, normalizedName: text, type: text, description: text, mentionCount: num, needsReview: flag });

export const toRelationship = rowMapper<RelationshipRecord>({
  id: text, kbId: text, sourceId: text, targetId: text, sourceName: text, targetName: text, label: text, description: text, weight: num, mentionCount: num,
});

/** What relationshipEdgesOfEntities reads: columns of the endpoint indexes only. */
export const EDGE_SELECT = 'SELECT r.id, r.source_id, r.target_id, r.weight FROM relationships r';

export const toEdge = rowMapper<RelationshipEdge>({ id: text, sourceId: text, targetId: text, weight: num });

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
    lastError: nullableText(r.last_error),
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
 * summary_hash, source_name, source_type, target_name, target_type) as summaries to compute; `descriptionsOf` gives a
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
      heading: entityHeading(String(r.name), String(r.type)),
      descriptions: distinctDescriptions(descriptionsOf('entity', String(r.id))),
    })),
    ...relationships.map((r) => {
      const descriptions = distinctDescriptions(descriptionsOf('relationship', String(r.id)));
      const item = relationshipItem({ name: String(r.source_name), type: String(r.source_type) }, String(r.label), { name: String(r.target_name), type: String(r.target_type) }, descriptions);
      return { kind: 'relationship' as const, id: String(r.id), summaryHash: String(r.summary_hash), ...item, descriptions };
    }),
  ];
}
