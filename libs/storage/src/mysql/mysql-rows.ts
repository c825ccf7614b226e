export { fromSqlTime, readJson, toChunk, toDocument, toEntity, toKnowledgeBase, toRelationship } from '../row-mappers';

/** Column lists shared by the store's queries, so every read maps the same shape. */
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

/** Splits an id list so no statement grows unbounded. */
export function batches<T>(values: readonly T[], size = 500): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}

/**
 * DATETIME(3) values travel as 'YYYY-MM-DD HH:MM:SS.mmm' in UTC (the pool uses dateStrings, so
 * neither the driver's nor the server's time zone shifts them); the API speaks ISO-8601.
 */
export function toSqlTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}
