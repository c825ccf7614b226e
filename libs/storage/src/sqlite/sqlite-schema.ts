import type Database from 'better-sqlite3';
import { sourceHash } from '../sql/document-sql';

/**
 * Versioned schema of the standalone store. A migration runs once, in order, inside a
 * transaction; the applied versions are recorded in schema_migrations.
 */
export const SQLITE_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE knowledge_bases (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        settings TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (tenant_id, name)
      );
      CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        source_uri TEXT NOT NULL,
        filename TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        version INTEGER NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        size_bytes INTEGER NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (tenant_id, kb_id, source_uri)
      );
      CREATE TABLE document_versions (
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (document_id, version)
      );
      CREATE TABLE chunks (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        ordinal INTEGER NOT NULL,
        text TEXT NOT NULL,
        heading TEXT NOT NULL DEFAULT '',
        token_count INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        error TEXT,
        embedding BLOB
      );
      CREATE INDEX chunks_by_document ON chunks (tenant_id, kb_id, document_id, version);
      CREATE VIRTUAL TABLE chunk_fts USING fts5 (chunk_id UNINDEXED, text, tokenize = 'porter unicode61');
      CREATE TABLE entities (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        name TEXT NOT NULL,
        normalized_name TEXT NOT NULL,
        type TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        mention_count INTEGER NOT NULL DEFAULT 0,
        kind TEXT NOT NULL DEFAULT 'extracted',
        embedding BLOB
      );
      CREATE INDEX entities_by_name ON entities (tenant_id, kb_id, normalized_name);
      CREATE TABLE relationships (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        label TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        weight REAL NOT NULL DEFAULT 0,
        mention_count INTEGER NOT NULL DEFAULT 0,
        embedding BLOB
      );
      CREATE INDEX relationships_by_source ON relationships (tenant_id, kb_id, source_id);
      CREATE INDEX relationships_by_target ON relationships (tenant_id, kb_id, target_id);
      CREATE TABLE entity_mentions (
        entity_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        description TEXT NOT NULL,
        PRIMARY KEY (entity_id, chunk_id)
      );
      CREATE INDEX entity_mentions_by_chunk ON entity_mentions (chunk_id);
      CREATE TABLE relationship_mentions (
        relationship_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        description TEXT NOT NULL,
        strength REAL NOT NULL,
        PRIMARY KEY (relationship_id, chunk_id)
      );
      CREATE INDEX relationship_mentions_by_chunk ON relationship_mentions (chunk_id);
      CREATE TABLE extraction_cache (
        cache_key TEXT PRIMARY KEY,
        result TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE chat_messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        citations TEXT NOT NULL DEFAULT '[]',
        created_at TEXT NOT NULL
      );
      CREATE INDEX chat_messages_by_chat ON chat_messages (tenant_id, chat_id);
    `,
  },
  {
    version: 2,
    name: 'entity names derived from their mentions',
    sql: `ALTER TABLE entity_mentions ADD COLUMN name TEXT NOT NULL DEFAULT '';`,
  },
  {
    version: 3,
    name: 'pipeline stages per document version',
    sql: `
      CREATE TABLE document_stages (
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        stage TEXT NOT NULL,
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        started_at TEXT NOT NULL,
        finished_at TEXT NOT NULL,
        events INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        last_error TEXT,
        PRIMARY KEY (document_id, version, stage)
      );
    `,
  },
  {
    version: 4,
    name: 'LLM usage per document version and the shared LLM call budget',
    sql: `
      CREATE TABLE llm_usage (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        calls INTEGER NOT NULL DEFAULT 0,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        estimated_cost_usd REAL NOT NULL DEFAULT 0,
        cache_hits INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, kb_id, document_id, version)
      );
      CREATE TABLE llm_buckets (
        bucket_key TEXT PRIMARY KEY,
        tokens REAL NOT NULL,
        updated_ms INTEGER NOT NULL
      );
      CREATE TABLE llm_leases (
        lease_key TEXT NOT NULL,
        slot INTEGER NOT NULL,
        holder TEXT NOT NULL DEFAULT '',
        expires_ms INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (lease_key, slot)
      );
    `,
  },
  {
    version: 5,
    name: 'summaries recomputed from their inputs; entities to review',
    sql: `
      ALTER TABLE entities ADD COLUMN summary_hash TEXT NOT NULL DEFAULT '';
      ALTER TABLE entities ADD COLUMN summary_pending INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entities ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE relationships ADD COLUMN summary_hash TEXT NOT NULL DEFAULT '';
      ALTER TABLE relationships ADD COLUMN summary_pending INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE entity_mentions ADD COLUMN needs_review INTEGER NOT NULL DEFAULT 0;
      -- Partial: an index on (tenant_id, kb_id, ...) alone would tempt the planner away from
      -- the name and endpoint indexes for every other query of a knowledge base.
      CREATE INDEX entities_pending_summaries ON entities (tenant_id, kb_id) WHERE summary_pending = 1;
      CREATE INDEX relationships_pending_summaries ON relationships (tenant_id, kb_id) WHERE summary_pending = 1;
    `,
  },
  {
    version: 6,
    name: 'manual graph edits: overlays, merges, replayable chunk writes, edit log',
    sql: `
      ALTER TABLE relationships ADD COLUMN kind TEXT NOT NULL DEFAULT 'extracted';
      CREATE TABLE graph_overlays (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        target_id TEXT NOT NULL,
        name TEXT,
        normalized_name TEXT,
        type TEXT,
        description TEXT,
        label TEXT,
        weight REAL,
        deleted_by TEXT,
        PRIMARY KEY (tenant_id, kb_id, target_kind, target_id)
      );
      CREATE TABLE graph_merges (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        id TEXT NOT NULL,
        source_id TEXT NOT NULL,
        target_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        undone_at TEXT,
        PRIMARY KEY (tenant_id, kb_id, id)
      );
      CREATE TABLE graph_edit_chunks (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        edit_id TEXT NOT NULL,
        chunk_id TEXT NOT NULL,
        extraction TEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, edit_id, chunk_id)
      );
      CREATE INDEX graph_edit_chunks_by_chunk ON graph_edit_chunks (tenant_id, kb_id, chunk_id);
      CREATE TABLE graph_edits (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        id TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target_ids TEXT NOT NULL,
        before_state TEXT NOT NULL,
        after_state TEXT NOT NULL,
        undo_state TEXT NOT NULL,
        created_at TEXT NOT NULL,
        undone_at TEXT,
        undone_by TEXT,
        PRIMARY KEY (tenant_id, kb_id, id)
      );
      CREATE INDEX graph_edits_by_time ON graph_edits (tenant_id, kb_id, created_at);
    `,
  },
  {
    version: 7,
    name: 'chunks by content hash, to resolve re-indexed text as before',
    sql: `CREATE INDEX chunks_by_content ON chunks (tenant_id, kb_id, content_hash);`,
  },
  {
    version: 8,
    // Entries without a tenant cannot be attributed to one: they are dropped (a cache; the
    // next extraction of the same text refills it).
    name: 'extraction cache per tenant and knowledge base',
    sql: `
      DROP TABLE extraction_cache;
      CREATE TABLE extraction_cache (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        cache_key TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, cache_key)
      );
      CREATE INDEX extraction_cache_by_key ON extraction_cache (tenant_id, cache_key);
    `,
  },
  {
    version: 9,
    name: 'chunks remaining per document version',
    // See chunk-progress.ts. Documents indexed before are counted once here.
    sql: `
      ALTER TABLE documents ADD COLUMN chunks_remaining INTEGER;
      UPDATE documents SET chunks_remaining = (
        SELECT COUNT(*) FROM chunks c WHERE c.tenant_id = documents.tenant_id AND c.kb_id = documents.kb_id
          AND c.document_id = documents.id AND c.version = documents.version AND c.status <> 'graphed'
      );
    `,
  },
  {
    version: 10,
    name: 'indexed text length per chunk, kept by the shared chunk writes',
    sql: `ALTER TABLE chunks ADD COLUMN fts_length INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    version: 11,
    name: 'document text in parts and documents by source hash, as the shared SQL keeps them',
    sql: `
      CREATE TABLE document_texts (
        tenant_id TEXT NOT NULL,
        kb_id TEXT NOT NULL,
        document_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        part INTEGER NOT NULL,
        text TEXT NOT NULL,
        PRIMARY KEY (tenant_id, kb_id, document_id, version, part)
      );
      INSERT INTO document_texts (tenant_id, kb_id, document_id, version, part, text)
        SELECT tenant_id, kb_id, document_id, version, 0, text FROM document_versions;
      DROP TABLE document_versions;
      ALTER TABLE documents ADD COLUMN source_hash TEXT NOT NULL DEFAULT '';
      UPDATE documents SET source_hash = trellis_source_hash(source_uri);
      CREATE INDEX documents_by_source_hash ON documents (tenant_id, kb_id, source_hash);
    `,
  },
];

/** Applies the migrations this file has not seen, each in its own transaction. */
export function migrateSqlite(db: Database.Database): void {
  // Migration 11 derives the source hashes of existing documents as the store computes them.
  db.function('trellis_source_hash', { deterministic: true }, (uri) => sourceHash(String(uri)));
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)');
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version));
  for (const migration of SQLITE_MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}
