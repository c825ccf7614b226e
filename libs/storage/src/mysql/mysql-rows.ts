export { CHUNK_COLUMNS, ENTITY_COLUMNS, batches, fromSqlTime, marks, readJson, toChunk, toDocument, toEntity, toKnowledgeBase, toRelationship } from '../row-mappers';

/** Relationships with their end names; both ends are joined inside the same knowledge base. */
export const RELATIONSHIP_SELECT = `SELECT r.id, r.kb_id, r.source_id, r.target_id, s.name AS source_name, t.name AS target_name,
  r.label, r.description, r.weight, r.mention_count FROM relationships r
  JOIN entities s ON s.tenant_id = r.tenant_id AND s.kb_id = r.kb_id AND s.id = r.source_id
  JOIN entities t ON t.tenant_id = r.tenant_id AND t.kb_id = r.kb_id AND t.id = r.target_id`;

/** Chunks of their document's current version: the only ones search may return. */
export const CURRENT_CHUNKS = `chunks c JOIN documents d
  ON d.tenant_id = c.tenant_id AND d.kb_id = c.kb_id AND d.id = c.document_id AND d.version = c.version`;

/**
 * DATETIME(3) values travel as 'YYYY-MM-DD HH:MM:SS.mmm' in UTC (the pool uses dateStrings, so
 * neither the driver's nor the server's time zone shifts them); the API speaks ISO-8601.
 */
export function toSqlTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}
