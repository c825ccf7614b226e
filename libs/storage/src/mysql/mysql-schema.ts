/**
 * Versioned schema of the MySQL-family store (TiDB, MariaDB, MySQL).
 *
 * DDL is not transactional on these servers, so every statement of a migration must be safe to
 * run again (CREATE ... IF NOT EXISTS): a migration interrupted halfway is simply re-run.
 *
 * Conventions, and why:
 * - Every tenant-owned table's primary key starts with (tenant_id, kb_id): rows of one knowledge
 *   base sit together, and no key can collide across tenants.
 * - Ids are VARCHAR(128) under a binary collation (the caller picks the no-pad variant where
 *   the server has one), so ids and names compare byte for byte as in SQLite.
 * - TEXT/BLOB/JSON columns get no DEFAULT (TiDB refuses one); the store always writes them.
 * - Document text is LONGTEXT, but is written in parts (see document_texts) because TiDB caps
 *   one row at 6 MB by default and MariaDB a packet at 16 MB, below a 50 MB document.
 */
export interface SchemaContext {
  /** Binary utf8mb4 collation of every table. */
  collation: string;
  /** Column type of embeddings: VECTOR on TiDB, MEDIUMBLOB elsewhere. */
  embeddingColumnType: string;
}

export interface MysqlMigration {
  version: number;
  name: string;
  statements(context: SchemaContext): string[];
}

const ID = 'VARCHAR(128) NOT NULL';

function table(context: SchemaContext, name: string, body: string): string {
  return `CREATE TABLE IF NOT EXISTS ${name} (${body}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${context.collation}`;
}

export const MYSQL_MIGRATIONS: readonly MysqlMigration[] = [
  {
    version: 1,
    name: 'initial schema',
    statements: (c) => [
      table(c, 'knowledge_bases', `
        tenant_id ${ID}, id ${ID},
        name VARCHAR(255) NOT NULL,
        description TEXT NOT NULL,
        settings JSON NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, id),
        UNIQUE KEY knowledge_bases_by_name (tenant_id, name)`),
      // source_uri can be a long URL: uniqueness is enforced on its SHA-256 instead.
      table(c, 'documents', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        source_uri TEXT NOT NULL,
        source_hash CHAR(64) NOT NULL,
        filename TEXT NOT NULL,
        mime_type VARCHAR(255) NOT NULL,
        content_hash VARCHAR(128) NOT NULL,
        version INT NOT NULL,
        status VARCHAR(32) NOT NULL,
        error MEDIUMTEXT NULL,
        size_bytes BIGINT NOT NULL,
        metadata JSON NOT NULL,
        created_at DATETIME(3) NOT NULL,
        updated_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, id),
        UNIQUE KEY documents_by_source (tenant_id, kb_id, source_hash),
        KEY documents_by_status (status)`),
      table(c, 'document_texts', `
        tenant_id ${ID}, kb_id ${ID}, document_id ${ID},
        version INT NOT NULL,
        part INT NOT NULL,
        text LONGTEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, document_id, version, part)`),
      table(c, 'chunks', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        document_id ${ID},
        version INT NOT NULL,
        ordinal INT NOT NULL,
        text MEDIUMTEXT NOT NULL,
        heading TEXT NOT NULL,
        token_count INT NOT NULL,
        content_hash VARCHAR(128) NOT NULL,
        status VARCHAR(32) NOT NULL,
        error MEDIUMTEXT NULL,
        fts_length INT NOT NULL DEFAULT 0,
        embedding ${c.embeddingColumnType} NULL,
        PRIMARY KEY (tenant_id, kb_id, id),
        KEY chunks_by_document (tenant_id, kb_id, document_id, version)`),
      // The full-text inverted index (TiDB self-hosted has no usable FULLTEXT): one posting per
      // (term, chunk) with its term frequency, plus per-KB totals for BM25's length norm.
      table(c, 'chunk_terms', `
        tenant_id ${ID}, kb_id ${ID},
        term VARCHAR(64) NOT NULL,
        chunk_id ${ID},
        tf INT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, term, chunk_id),
        KEY chunk_terms_by_chunk (tenant_id, kb_id, chunk_id)`),
      table(c, 'kb_text_stats', `
        tenant_id ${ID}, kb_id ${ID},
        chunk_count BIGINT NOT NULL,
        total_length BIGINT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id)`),
      // Names are unbounded (they come from a language model): TEXT, indexed by prefix.
      table(c, 'entities', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        name TEXT NOT NULL,
        normalized_name TEXT NOT NULL,
        type TEXT NOT NULL,
        description TEXT NOT NULL,
        mention_count INT NOT NULL DEFAULT 0,
        kind VARCHAR(32) NOT NULL DEFAULT 'extracted',
        embedding ${c.embeddingColumnType} NULL,
        PRIMARY KEY (tenant_id, kb_id, id),
        KEY entities_by_name (tenant_id, kb_id, normalized_name(191))`),
      table(c, 'relationships', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        source_id ${ID},
        target_id ${ID},
        label TEXT NOT NULL,
        description TEXT NOT NULL,
        weight DOUBLE NOT NULL DEFAULT 0,
        mention_count INT NOT NULL DEFAULT 0,
        embedding ${c.embeddingColumnType} NULL,
        PRIMARY KEY (tenant_id, kb_id, id),
        KEY relationships_by_source (tenant_id, kb_id, source_id),
        KEY relationships_by_target (tenant_id, kb_id, target_id)`),
      table(c, 'entity_mentions', `
        tenant_id ${ID}, kb_id ${ID},
        entity_id ${ID},
        chunk_id ${ID},
        description TEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, entity_id, chunk_id),
        KEY entity_mentions_by_chunk (tenant_id, kb_id, chunk_id)`),
      table(c, 'relationship_mentions', `
        tenant_id ${ID}, kb_id ${ID},
        relationship_id ${ID},
        chunk_id ${ID},
        description TEXT NOT NULL,
        strength DOUBLE NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, relationship_id, chunk_id),
        KEY relationship_mentions_by_chunk (tenant_id, kb_id, chunk_id)`),
      // Replaced by a per-tenant table in migration 8.
      table(c, 'extraction_cache', `
        cache_key VARCHAR(191) NOT NULL,
        result JSON NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (cache_key)`),
      table(c, 'chat_messages', `
        id BIGINT NOT NULL AUTO_INCREMENT,
        tenant_id ${ID}, kb_id ${ID},
        chat_id ${ID},
        role VARCHAR(16) NOT NULL,
        content MEDIUMTEXT NOT NULL,
        citations JSON NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (id),
        KEY chat_messages_by_chat (tenant_id, chat_id)`),
    ],
  },
  {
    version: 2,
    name: 'entity names derived from their mentions',
    statements: () => [`ALTER TABLE entity_mentions ADD COLUMN name VARCHAR(512) NOT NULL DEFAULT ''`],
  },
  {
    version: 3,
    name: 'pipeline stages per document version',
    statements: (c) => [
      table(c, 'document_stages', `
        tenant_id ${ID}, kb_id ${ID},
        document_id ${ID},
        version INT NOT NULL,
        stage VARCHAR(32) NOT NULL,
        started_at DATETIME(3) NOT NULL,
        finished_at DATETIME(3) NOT NULL,
        events INT NOT NULL,
        failures INT NOT NULL,
        last_error MEDIUMTEXT NULL,
        PRIMARY KEY (tenant_id, kb_id, document_id, version, stage)`),
    ],
  },
  {
    version: 4,
    name: 'LLM usage per document version and the shared LLM call budget',
    statements: (c) => [
      table(c, 'llm_usage', `
        tenant_id ${ID}, kb_id ${ID},
        document_id ${ID},
        version INT NOT NULL,
        calls BIGINT NOT NULL DEFAULT 0,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        estimated_cost_usd DOUBLE NOT NULL DEFAULT 0,
        cache_hits BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, kb_id, document_id, version)`),
      // Shared by every process of a deployment: one token bucket per (model, budget).
      table(c, 'llm_buckets', `
        bucket_key VARCHAR(191) NOT NULL,
        tokens DOUBLE NOT NULL,
        updated_ms BIGINT NOT NULL,
        PRIMARY KEY (bucket_key)`),
      // One row per concurrency slot; a slot whose lease expired is free again.
      table(c, 'llm_leases', `
        lease_key VARCHAR(191) NOT NULL,
        slot INT NOT NULL,
        holder VARCHAR(128) NOT NULL DEFAULT '',
        expires_ms BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (lease_key, slot)`),
    ],
  },
  {
    version: 5,
    name: 'summaries recomputed from their inputs; entities to review',
    // One ALTER per table: each applies whole or not at all, so a re-run finds it done or undone.
    statements: () => [
      `ALTER TABLE entities ADD COLUMN summary_hash VARCHAR(64) NOT NULL DEFAULT '', ADD COLUMN summary_pending TINYINT NOT NULL DEFAULT 0,
         ADD COLUMN needs_review TINYINT NOT NULL DEFAULT 0, ADD KEY entities_pending_summaries (summary_pending, tenant_id, kb_id)`,
      `ALTER TABLE relationships ADD COLUMN summary_hash VARCHAR(64) NOT NULL DEFAULT '', ADD COLUMN summary_pending TINYINT NOT NULL DEFAULT 0,
         ADD KEY relationships_pending_summaries (summary_pending, tenant_id, kb_id)`,
      `ALTER TABLE entity_mentions ADD COLUMN needs_review TINYINT NOT NULL DEFAULT 0`,
    ],
  },
  {
    version: 6,
    name: 'manual graph edits: overlays, merges, replayable chunk writes, edit log',
    statements: (c) => [
      `ALTER TABLE relationships ADD COLUMN kind VARCHAR(32) NOT NULL DEFAULT 'extracted'`,
      // Overrides (NULL: not overridden) and tombstones (deleted_by) of one entity or relationship.
      table(c, 'graph_overlays', `
        tenant_id ${ID}, kb_id ${ID},
        target_kind VARCHAR(16) NOT NULL,
        target_id ${ID},
        name TEXT NULL,
        normalized_name TEXT NULL,
        type TEXT NULL,
        description TEXT NULL,
        label TEXT NULL,
        weight DOUBLE NULL,
        deleted_by VARCHAR(128) NULL,
        PRIMARY KEY (tenant_id, kb_id, target_kind, target_id)`),
      table(c, 'graph_merges', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        source_id ${ID},
        target_id ${ID},
        created_at DATETIME(3) NOT NULL,
        undone_at DATETIME(3) NULL,
        PRIMARY KEY (tenant_id, kb_id, id)`),
      // The original writes of each chunk an edit changed: what its undo replays.
      table(c, 'graph_edit_chunks', `
        tenant_id ${ID}, kb_id ${ID},
        edit_id ${ID},
        chunk_id ${ID},
        extraction LONGTEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, edit_id, chunk_id),
        KEY graph_edit_chunks_by_chunk (tenant_id, kb_id, chunk_id)`),
      table(c, 'graph_edits', `
        tenant_id ${ID}, kb_id ${ID}, id ${ID},
        actor VARCHAR(255) NOT NULL,
        action VARCHAR(32) NOT NULL,
        target_ids TEXT NOT NULL,
        before_state MEDIUMTEXT NOT NULL,
        after_state MEDIUMTEXT NOT NULL,
        undo_state LONGTEXT NOT NULL,
        created_at DATETIME(3) NOT NULL,
        undone_at DATETIME(3) NULL,
        undone_by VARCHAR(255) NULL,
        PRIMARY KEY (tenant_id, kb_id, id),
        KEY graph_edits_by_time (tenant_id, kb_id, created_at)`),
    ],
  },
  {
    version: 7,
    name: 'chunks by content hash, to resolve re-indexed text as before',
    statements: () => ['ALTER TABLE chunks ADD KEY chunks_by_content (tenant_id, kb_id, content_hash)'],
  },
  {
    version: 8,
    name: 'extraction cache per tenant and knowledge base',
    // Entries without a tenant cannot be attributed to one: they are dropped (a cache; the next
    // extraction of the same text refills it). Drop and create are each safe to run again.
    statements: (c) => [
      'DROP TABLE IF EXISTS extraction_cache',
      table(c, 'extraction_cache', `
        tenant_id ${ID}, kb_id ${ID},
        cache_key VARCHAR(191) NOT NULL,
        result JSON NOT NULL,
        created_at DATETIME(3) NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, cache_key),
        KEY extraction_cache_by_key (tenant_id, cache_key)`),
    ],
  },
  {
    version: 9,
    name: 'chunks remaining per document version',
    // See chunk-progress.ts. One ALTER (whole or not at all); the count of the documents indexed
    // before is safe to run again.
    statements: () => [
      'ALTER TABLE documents ADD COLUMN chunks_remaining INT NULL',
      `UPDATE documents d SET chunks_remaining = (
         SELECT COUNT(*) FROM chunks c WHERE c.tenant_id = d.tenant_id AND c.kb_id = d.kb_id
           AND c.document_id = d.id AND c.version = d.version AND c.status <> 'graphed'
       )`,
    ],
  },
];

export const SCHEMA_MIGRATIONS_DDL = (context: SchemaContext): string =>
  table(context, 'schema_migrations', `
    version INT NOT NULL,
    name VARCHAR(255) NOT NULL,
    applied_at DATETIME(3) NOT NULL,
    PRIMARY KEY (version)`);
