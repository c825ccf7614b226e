import { BIGINT, BYTES, DOUBLE, EMBEDDING, ID, INT, JSON_TEXT, LONGTEXT, MEDIUMTEXT, SERIAL, TEXT, TIME, TINYINT, VECTOR_BYTES, char, nullable, since, varchar, withDefault } from './table-spec';
import type { TableSpec } from './table-spec';
import { ENTITY_GRAPH_TABLES } from './graph-tables';
import { BY_ID, EMPTY, SCOPE, SCOPED_ID, ZERO } from './shared-columns';

/**
 * The tables of both stores, written once. Where the two engines' histories differ (SQLite's
 * tables began keyed by id alone; the MySQL family's key starts with (tenant_id, kb_id) so rows
 * of one knowledge base sit together and no key collides across tenants), the difference is
 * named per engine: a database that applied the old migrations keeps its layout.
 *
 * Conventions: TEXT, BLOB and JSON columns have no DEFAULT on the MySQL family (the store
 * always writes them); names come from a language model, so they are TEXT, indexed by prefix.
 * Document text is written in parts (document_texts) because TiDB caps a row at 6 MB by
 * default and MariaDB a packet at 16 MB, below a 50 MB document.
 */
export const SCHEMA_MIGRATIONS: TableSpec = {
  name: 'schema_migrations',
  since: 0,
  columns: { version: INT, name: varchar(255), applied_at: TIME },
  primaryKey: ['version'],
};

export const TABLES: readonly TableSpec[] = [
  {
    name: 'knowledge_bases',
    columns: { tenant_id: ID, id: ID, name: varchar(255), description: EMPTY, settings: JSON_TEXT, created_at: TIME },
    primaryKey: { sqlite: ['id'], mysql: ['tenant_id', 'id'] },
    indexes: [{ name: 'knowledge_bases_by_name', columns: ['tenant_id', 'name'], unique: true }],
  },
  {
    name: 'documents',
    columns: {
      ...SCOPED_ID,
      source_uri: TEXT,
      // source_uri can be a long URL: lookups and (MySQL) uniqueness use its SHA-256.
      source_hash: since(withDefault(char(64), { sqlite: "''", mysql: undefined }), { sqlite: 11, mysql: 1 }),
      filename: TEXT,
      mime_type: varchar(255),
      content_hash: varchar(128),
      version: INT,
      status: varchar(32),
      error: nullable(MEDIUMTEXT),
      size_bytes: BIGINT,
      metadata: withDefault(JSON_TEXT, "'{}'"),
      created_at: TIME,
      updated_at: TIME,
      chunks_remaining: since(nullable(INT), 9),
      // Sweeper re-drives of the current version (reset by a new version); see stuck-work.ts.
      redrive_count: since(ZERO(), 12),
      // What the current version is about (metadata title, heading, <title> or file name), and its titleKey.
      title: since(withDefault(varchar(512), "''"), 20),
      title_key: since(withDefault(varchar(512), "''"), 20),
    },
    primaryKey: BY_ID,
    indexes: [
      { name: 'documents_by_source_uri', columns: ['tenant_id', 'kb_id', 'source_uri'], unique: true, only: 'sqlite' },
      { name: 'documents_by_source', columns: ['tenant_id', 'kb_id', 'source_hash'], unique: true, only: 'mysql' },
      { name: 'documents_by_status', columns: ['status'], only: 'mysql' },
      { name: 'documents_by_source_hash', columns: ['tenant_id', 'kb_id', 'source_hash'], only: 'sqlite', since: 11 },
      { name: 'documents_by_title_key', columns: ['tenant_id', 'kb_id', 'title_key'], since: 20 },
    ],
  },
  {
    name: 'document_texts',
    since: { sqlite: 11, mysql: 1 },
    columns: { ...SCOPE, document_id: ID, version: INT, part: INT, text: LONGTEXT },
    primaryKey: ['tenant_id', 'kb_id', 'document_id', 'version', 'part'],
  },
  {
    name: 'chunks',
    columns: {
      ...SCOPED_ID,
      document_id: ID,
      version: INT,
      ordinal: INT,
      text: MEDIUMTEXT,
      heading: EMPTY,
      token_count: INT,
      content_hash: varchar(128),
      status: varchar(32),
      error: nullable(MEDIUMTEXT),
      fts_length: since(ZERO(), { sqlite: 10, mysql: 1 }),
      embedding: EMBEDDING,
      // When the status last changed: how the sweeper tells a stuck chunk from a busy one.
      updated_at: since(nullable(TIME), 12),
    },
    primaryKey: BY_ID,
    indexes: [
      { name: 'chunks_by_document', columns: ['tenant_id', 'kb_id', 'document_id', 'version'] },
      { name: 'chunks_by_content', columns: ['tenant_id', 'kb_id', 'content_hash'], since: 7 },
      { name: 'chunks_by_status', columns: ['status', 'updated_at'], since: 12 },
    ],
  },
  // The MySQL family's full-text index (self-hosted TiDB parses FULLTEXT and ignores it): one
  // posting per (term, chunk) with its term frequency and the chunk's length (so BM25 ranks on
  // the postings alone), plus per-KB totals for BM25's length norm. SQLite keeps its full text in memory instead.
  {
    name: 'chunk_terms',
    only: 'mysql',
    columns: { ...SCOPE, term: varchar(64), chunk_id: ID, tf: INT, fts_length: since(ZERO(), 19) },
    primaryKey: ['tenant_id', 'kb_id', 'term', 'chunk_id'],
    indexes: [{ name: 'chunk_terms_by_chunk', columns: ['tenant_id', 'kb_id', 'chunk_id'] }],
  },
  {
    name: 'kb_text_stats',
    only: 'mysql',
    columns: { ...SCOPE, chunk_count: BIGINT, total_length: BIGINT },
    primaryKey: ['tenant_id', 'kb_id'],
  },
  ...ENTITY_GRAPH_TABLES,
  {
    name: 'extraction_cache',
    since: 8,
    columns: { ...SCOPE, cache_key: varchar(191), result: JSON_TEXT, created_at: TIME },
    primaryKey: ['tenant_id', 'kb_id', 'cache_key'],
    indexes: [{ name: 'extraction_cache_by_key', columns: ['tenant_id', 'cache_key'] }],
  },
  {
    name: 'chat_messages',
    columns: {
      id: SERIAL,
      ...SCOPE,
      chat_id: ID,
      role: varchar(16),
      content: MEDIUMTEXT,
      citations: withDefault(JSON_TEXT, "'[]'"),
      created_at: TIME,
      // A user message's question as condensed with the history before retrieval (NULL: unchanged).
      condensed_question: since(nullable(TEXT), 14),
    },
    primaryKey: ['id'],
    indexes: [{ name: 'chat_messages_by_chat', columns: ['tenant_id', 'chat_id'] }],
  },
  // One row per conversation, ids unique per tenant, deleted with its knowledge base; newest first.
  {
    name: 'chats',
    since: 14,
    columns: { tenant_id: ID, id: ID, kb_id: ID, title: TEXT, engine: withDefault(varchar(64), "''"), message_count: ZERO(), created_at: TIME, updated_at: TIME },
    primaryKey: ['tenant_id', 'id'],
    indexes: [
      { name: 'chats_by_time', columns: ['tenant_id', 'created_at', 'id'] },
      { name: 'chats_by_kb', columns: ['tenant_id', 'kb_id', 'created_at', 'id'] },
    ],
  },
  // Chat engines: named chat configurations per tenant (settings: ChatEngineSettings as JSON).
  {
    name: 'chat_engines',
    since: 15,
    columns: { tenant_id: ID, name: varchar(64), description: TEXT, settings: JSON_TEXT, created_at: TIME, updated_at: TIME },
    primaryKey: ['tenant_id', 'name'],
  },
  {
    name: 'document_stages',
    since: 3,
    columns: {
      ...SCOPE,
      document_id: ID,
      version: INT,
      stage: varchar(32),
      started_at: TIME,
      finished_at: TIME,
      events: INT,
      failures: INT,
      last_error: nullable(MEDIUMTEXT),
    },
    primaryKey: { sqlite: ['document_id', 'version', 'stage'], mysql: ['tenant_id', 'kb_id', 'document_id', 'version', 'stage'] },
  },
  {
    name: 'llm_usage',
    since: 4,
    columns: {
      ...SCOPE,
      document_id: ID,
      version: INT,
      calls: ZERO(BIGINT),
      input_tokens: ZERO(BIGINT),
      output_tokens: ZERO(BIGINT),
      estimated_cost_usd: ZERO(DOUBLE),
      cache_hits: ZERO(BIGINT),
    },
    primaryKey: ['tenant_id', 'kb_id', 'document_id', 'version'],
  },
  // The same usage per UTC day (YYYY-MM-DD) and purpose: what per-knowledge-base budgets are
  // checked against and what ingest estimates learn a knowledge base's output length from.
  {
    name: 'llm_spend',
    since: 17,
    columns: {
      ...SCOPE,
      day: char(10),
      purpose: varchar(16),
      calls: ZERO(BIGINT),
      input_tokens: ZERO(BIGINT),
      output_tokens: ZERO(BIGINT),
      estimated_cost_usd: ZERO(DOUBLE),
      counted_input_tokens: ZERO(BIGINT),
    },
    primaryKey: ['tenant_id', 'kb_id', 'day', 'purpose'],
  },
  // Chunks whose LLM extraction waits for the budget: re-announced once it allows again.
  {
    name: 'llm_paused_chunks',
    since: 17,
    columns: { ...SCOPE, chunk_id: ID, document_id: ID, version: INT, content_hash: varchar(128), paused_at: TIME },
    primaryKey: ['tenant_id', 'kb_id', 'chunk_id'],
    indexes: [{ name: 'llm_paused_chunks_by_document', columns: ['tenant_id', 'kb_id', 'document_id', 'version'], since: 25 }],
  },
  // Events written with the change they announce, deleted once published (see outbox-sql.ts).
  // Deployment-wide like the leases below: the relay publishes every tenant's, oldest first.
  {
    name: 'outbox_events',
    since: 18,
    columns: { seq: SERIAL, id: ID, topic: varchar(128), event_key: ID, payload: BYTES, headers: JSON_TEXT, created_at: TIME },
    primaryKey: ['seq'],
    indexes: [{ name: 'outbox_events_by_id', columns: ['id'], unique: true }],
  },
  // Deployment-wide: a token bucket per (model, budget), a row per concurrency slot (expired: free).
  { name: 'llm_buckets', since: 4, columns: { bucket_key: varchar(191), tokens: DOUBLE, updated_ms: BIGINT }, primaryKey: ['bucket_key'] },
  {
    name: 'llm_leases',
    since: 4,
    columns: { lease_key: varchar(191), slot: INT, holder: withDefault(varchar(128), "''"), expires_ms: ZERO(BIGINT) },
    primaryKey: ['lease_key', 'slot'],
  },
  // Manual graph edits. Overrides (NULL: not overridden) and tombstones (deleted_by) of one
  // entity or relationship; merges; the original writes of each chunk an edit changed (what
  // its undo replays); the edit log.
  {
    name: 'graph_overlays',
    since: 6,
    columns: {
      ...SCOPE,
      target_kind: varchar(16),
      target_id: ID,
      name: nullable(TEXT),
      normalized_name: nullable(TEXT),
      type: nullable(TEXT),
      description: nullable(TEXT),
      label: nullable(TEXT),
      weight: nullable(DOUBLE),
      deleted_by: nullable(varchar(128)),
    },
    primaryKey: ['tenant_id', 'kb_id', 'target_kind', 'target_id'],
  },
  {
    name: 'graph_merges',
    since: 6,
    columns: { ...SCOPED_ID, source_id: ID, target_id: ID, created_at: TIME, undone_at: nullable(TIME) },
    primaryKey: ['tenant_id', 'kb_id', 'id'],
  },
  {
    name: 'graph_edit_chunks',
    since: 6,
    columns: { ...SCOPE, edit_id: ID, chunk_id: ID, extraction: LONGTEXT },
    primaryKey: ['tenant_id', 'kb_id', 'edit_id', 'chunk_id'],
    indexes: [{ name: 'graph_edit_chunks_by_chunk', columns: ['tenant_id', 'kb_id', 'chunk_id'] }],
  },
  {
    name: 'graph_edits',
    since: 6,
    columns: {
      ...SCOPED_ID,
      actor: varchar(255),
      action: varchar(32),
      target_ids: TEXT,
      before_state: MEDIUMTEXT,
      after_state: MEDIUMTEXT,
      undo_state: LONGTEXT,
      created_at: TIME,
      undone_at: nullable(TIME),
      undone_by: nullable(varchar(255)),
    },
    primaryKey: ['tenant_id', 'kb_id', 'id'],
    indexes: [{ name: 'graph_edits_by_time', columns: ['tenant_id', 'kb_id', 'created_at'] }],
  },
  // Communities of the entity graph (see @trellis/graph's CommunityBuilder): one row per
  // community and level with its report; members are entities at every level. Report
  // embeddings are few per knowledge base and ranked in the service (no vector index).
  {
    name: 'communities',
    since: 13,
    columns: {
      ...SCOPED_ID,
      level: INT,
      parent_id: nullable(ID),
      title: TEXT,
      summary: MEDIUMTEXT,
      key_facts: JSON_TEXT,
      report_kind: varchar(16),
      content_hash: char(64),
      member_count: INT,
      embedding: VECTOR_BYTES,
      updated_at: TIME,
    },
    primaryKey: ['tenant_id', 'kb_id', 'id'],
  },
  {
    name: 'community_members',
    since: 13,
    columns: { ...SCOPE, community_id: ID, entity_id: ID },
    primaryKey: ['tenant_id', 'kb_id', 'community_id', 'entity_id'],
    indexes: [
      { name: 'community_members_by_entity', columns: ['tenant_id', 'kb_id', 'entity_id'], until: 25 },
      // Covering, so that SQLite (no statistics) takes it over the covering primary key, whose
      // range on the scope alone is every membership of the knowledge base.
      { name: 'community_members_of_entity', columns: ['tenant_id', 'kb_id', 'entity_id', 'community_id'], since: 25 },
    ],
  },
  // When a knowledge base's graph last changed and when its communities were last refreshed
  // from it: a refresh is due once the graph has been quiet for a while (the debounce).
  // changes_tracked: 1 once a refresh has run with community_changes kept (migration 16); a
  // knowledge base built before has changes nobody recorded, and is refreshed from the whole graph once.
  {
    name: 'community_state',
    since: 13,
    columns: { ...SCOPE, changed_at: nullable(TIME), refreshed_at: nullable(TIME), changes_tracked: since(ZERO(TINYINT), 16) },
    primaryKey: ['tenant_id', 'kb_id'],
  },
  // Entities whose content or relationships changed since the last community refresh, written in
  // the transaction of the change: what lets a refresh read the neighbourhood of a change instead
  // of the whole graph. `version` counts the changes, so a refresh removes exactly the marks it
  // read, and a change that lands while it runs stays for the next one.
  {
    name: 'community_changes',
    since: 16,
    columns: { ...SCOPE, entity_id: ID, version: ZERO() },
    primaryKey: ['tenant_id', 'kb_id', 'entity_id'],
  },
];
