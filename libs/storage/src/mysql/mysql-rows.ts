export { CHUNK_COLUMNS, CURRENT_CHUNKS, ENTITY_COLUMNS, RELATIONSHIP_SELECT, batches, fromSqlTime, marks, readJson, toChunk, toDocument, toEntity, toKnowledgeBase, toRelationship } from '../row-mappers';

/**
 * DATETIME(3) values travel as 'YYYY-MM-DD HH:MM:SS.mmm' in UTC (the pool uses dateStrings, so
 * neither the driver's nor the server's time zone shifts them); the API speaks ISO-8601.
 */
export function toSqlTime(iso: string): string {
  return iso.replace('T', ' ').replace(/Z$/, '');
}
