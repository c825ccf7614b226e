import { DOUBLE, EMBEDDING, ID, TEXT, TINYINT, since, varchar, withDefault } from './table-spec';
import type { TableSpec } from './table-spec';
import { BY_ID, EMPTY, SCOPE, SCOPED_ID, ZERO } from './shared-columns';

/** The SQLite index that answers entity names and mention counts by id (ENTITY_NODE_COLUMNS). */
export const ENTITY_NODES_INDEX = 'entity_nodes';

const SUMMARY_STATE = { summary_hash: since(withDefault(varchar(64), "''"), 5), summary_pending: since(ZERO(TINYINT), 5) };

/**
 * The entity graph derived from extraction: entities, relationships, the mentions they are
 * derived from, and the words of entity names. Part of TABLES (tables.ts), in this order.
 */
export const ENTITY_GRAPH_TABLES: readonly TableSpec[] = [
  {
    name: 'entities',
    columns: {
      ...SCOPED_ID,
      name: TEXT,
      normalized_name: TEXT,
      type: TEXT,
      description: EMPTY,
      mention_count: ZERO(),
      kind: withDefault(varchar(32), "'extracted'"),
      embedding: EMBEDDING,
      ...SUMMARY_STATE,
      needs_review: since(ZERO(TINYINT), 5),
    },
    primaryKey: BY_ID,
    indexes: [
      { name: 'entities_by_name', columns: ['tenant_id', 'kb_id', 'normalized_name(191)'] },
      pendingSummaries('entities'),
      // Names and mention counts of entities by id from the index alone (getEntityNodes and the
      // ranking of name candidates: hundreds per graph walk). A SQLite row holds its embedding
      // inline, so each was a page of its own. Scope last, as entity_mentions_of_entity; read
      // through dialect.indexedBy, since SQLite prefers the unique index on id otherwise.
      { name: ENTITY_NODES_INDEX, columns: ['id', 'normalized_name', 'mention_count', 'name', 'tenant_id', 'kb_id'], only: 'sqlite', since: 27 },
    ],
  },
  // The words of each entity's normalised name (entityNameTerms in entity-name-terms-sql.ts),
  // kept with the entity in every write: what finds entities by name as an index range
  // instead of a LIKE over every name of the knowledge base.
  {
    name: 'entity_name_terms',
    since: 21,
    columns: { ...SCOPE, term: varchar(64), entity_id: ID },
    primaryKey: ['tenant_id', 'kb_id', 'term', 'entity_id'],
    indexes: [{ name: 'entity_name_terms_by_entity', columns: ['tenant_id', 'kb_id', 'entity_id', 'term'] }],
  },
  {
    name: 'relationships',
    columns: {
      ...SCOPED_ID,
      source_id: ID,
      target_id: ID,
      label: TEXT,
      description: EMPTY,
      weight: ZERO(DOUBLE),
      mention_count: ZERO(),
      embedding: EMBEDDING,
      ...SUMMARY_STATE,
      kind: since(withDefault(varchar(32), "'extracted'"), 6),
    },
    primaryKey: BY_ID,
    indexes: [
      { name: 'relationships_by_source', columns: ['tenant_id', 'kb_id', 'source_id'], until: 22 },
      { name: 'relationships_by_target', columns: ['tenant_id', 'kb_id', 'target_id'], until: 22 },
      { name: 'relationship_edges_by_source', columns: ['tenant_id', 'kb_id', 'source_id', 'target_id', 'weight', 'id'], since: 22, until: 26 },
      { name: 'relationship_edges_by_target', columns: ['tenant_id', 'kb_id', 'target_id', 'source_id', 'weight', 'id'], since: 22, until: 26 },
      // The edges of an entity read from the index alone (relationshipEdgesOfEntities): the
      // walks read thousands around a hub, and a row with its inline embedding is a page each.
      // Weight after the end, so an entity's heaviest edges are the first entries of its range
      // (read backwards) and a walk reads only as many as it keeps, not all of a hub's.
      { name: 'relationship_heaviest_by_source', columns: ['tenant_id', 'kb_id', 'source_id', 'weight', 'id', 'target_id'], since: 26 },
      { name: 'relationship_heaviest_by_target', columns: ['tenant_id', 'kb_id', 'target_id', 'weight', 'id', 'source_id'], since: 26 },
      pendingSummaries('relationships'),
    ],
  },
  {
    name: 'entity_mentions',
    columns: { ...SCOPE, entity_id: ID, chunk_id: ID, description: TEXT, name: since(withDefault(varchar(512), "''"), 2), needs_review: since(ZERO(TINYINT), 5) },
    primaryKey: mentionKey('entity_id'),
    indexes: [
      mentionsByChunk('entity_mentions'),
      // The chunks of entities read from an index alone (chunkIdsForEntities: a graph walk reads
      // thousands); SQLite's key (entity_id, chunk_id) leaves each row's scope to be read from
      // the row, with its description. Scope last: led by it, the index would draw the planner
      // away from the index by chunk. The MySQL family's key covers these reads already.
      { name: 'entity_mentions_of_entity', columns: ['entity_id', 'chunk_id', 'tenant_id', 'kb_id'], only: 'sqlite', since: 25 },
    ],
  },
  {
    name: 'relationship_mentions',
    columns: { ...SCOPE, relationship_id: ID, chunk_id: ID, description: TEXT, strength: DOUBLE },
    primaryKey: mentionKey('relationship_id'),
    indexes: [mentionsByChunk('relationship_mentions')],
  },
];

/**
 * Rows whose summary is pending. On SQLite a partial index: one on (tenant_id, kb_id) alone
 * would tempt the planner away from the name and endpoint indexes for every other query of a
 * knowledge base. The MySQL family has no partial indexes: the flag leads instead.
 */
function pendingSummaries(table: string) {
  return {
    name: `${table}_pending_summaries`,
    columns: { sqlite: ['tenant_id', 'kb_id'], mysql: ['summary_pending', 'tenant_id', 'kb_id'] },
    where: 'summary_pending = 1',
    since: 5,
  };
}

function mentionKey(owner: string) {
  return { sqlite: [owner, 'chunk_id'], mysql: ['tenant_id', 'kb_id', owner, 'chunk_id'] };
}

function mentionsByChunk(table: string) {
  return { name: `${table}_by_chunk`, columns: { sqlite: ['chunk_id'], mysql: ['tenant_id', 'kb_id', 'chunk_id'] } };
}
