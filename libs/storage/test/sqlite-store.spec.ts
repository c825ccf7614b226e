import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { SQLITE_MIGRATIONS } from '../src/sqlite/sqlite-schema';
import { TEST_KB_SETTINGS, chunk, saveTestDocument } from './store-contract';
import { describeStoreContracts } from './contract-suites';
import { inFlightDocument } from './chunk-progress-contract';
import { describeSqliteQueryPlans } from './sqlite-query-plans';
import { describeEdgeIndexUpgrade } from './edge-index-contract';
import { describeEntityNameBackfill, describeEntityNameContract } from './entity-name-contract';
import type { NameTermRow } from './entity-name-contract';

describeStoreContracts('SqliteStore', async () => new SqliteStore(':memory:'));
describeEntityNameContract('SqliteStore', async () => new SqliteStore(':memory:'), async (store) => {
  // The store keeps its connection to itself; a test may look through it.
  const db = (store as unknown as { db: Database.Database }).db;
  return db.prepare('SELECT tenant_id AS tenantId, kb_id AS kbId, entity_id AS entityId, term FROM entity_name_terms').all() as NameTermRow[];
});

/** Migrations 22 and 26 undone: the endpoint indexes of the first schema. */
const UNDO_22 =
  'DROP INDEX relationship_heaviest_by_source; DROP INDEX relationship_heaviest_by_target; ' +
  'CREATE INDEX relationships_by_source ON relationships (tenant_id, kb_id, source_id); CREATE INDEX relationships_by_target ON relationships (tenant_id, kb_id, target_id)';

// A file store taken back to before migration 21, then opened again (which migrates it).
const backfillDir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
afterAll(() => rmSync(backfillDir, { recursive: true, force: true }));
describeEntityNameBackfill('SqliteStore', async () => new SqliteStore(join(backfillDir, 'trellis.db')), async (store) => {
  await store.close();
  const old = new Database(join(backfillDir, 'trellis.db'));
  old.exec('DROP TABLE entity_name_terms; DELETE FROM schema_migrations WHERE version = 21');
  old.close();
  return new SqliteStore(join(backfillDir, 'trellis.db'));
});

// A file store taken back to before migrations 22 and 26, then opened again (which migrates it).
const edgeIndexDir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
afterAll(() => rmSync(edgeIndexDir, { recursive: true, force: true }));
describeEdgeIndexUpgrade(
  'SqliteStore',
  async () => new SqliteStore(join(edgeIndexDir, 'trellis.db')),
  async (store) => {
    await store.close();
    const old = new Database(join(edgeIndexDir, 'trellis.db'));
    old.exec(`${UNDO_22}; DELETE FROM schema_migrations WHERE version IN (22, 26)`);
    old.close();
    return new SqliteStore(join(edgeIndexDir, 'trellis.db'));
  },
  async () => {
    const db = new Database(join(edgeIndexDir, 'trellis.db'), { readonly: true });
    try {
      return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'relationships'").all() as Array<{ name: string }>).map((r) => r.name);
    } finally {
      db.close();
    }
  },
);

describe('SqliteStore checkpoints', () => {
  it('copies the WAL into the database file from a worker thread, with no checkpoint by the writer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    const path = join(dir, 'trellis.db');
    const store = new SqliteStore(path);
    try {
      // The migrations went to the WAL, far below the writer's autocheckpoint.
      const written = statSync(`${path}-wal`).size;
      expect(written).toBeGreaterThan(100_000);
      // The database's size as its pages say (WAL included): what the file holds once checkpointed.
      const reader = new Database(path, { readonly: true });
      const logical = Number(reader.pragma('page_count', { simple: true })) * Number(reader.pragma('page_size', { simple: true }));
      reader.close();
      expect(statSync(path).size).toBeLessThan(logical);
      for (let waited = 0; statSync(path).size < logical && waited < 10_000; waited += 50) await sleep(50);
      expect(statSync(path).size).toBeGreaterThanOrEqual(logical);
      // The store goes on working on the file the worker checkpointed.
      await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 'default' }, { name: 'after-checkpoint', description: '', settings: TEST_KB_SETTINGS });
      expect((await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 'default' }, 'after-checkpoint'))?.name).toBe('after-checkpoint');
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SqliteStore migrations', () => {
  it('replaces the tenant-less extraction cache of a version 7 file: its entries go, new ones are per tenant', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    try {
      const path = join(dir, 'trellis.db');
      const old = new Database(path);
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)');
      for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= 7)) {
        old.exec(migration.sql);
        old.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, '2026-01-01T00:00:00.000Z');
      }
      old.prepare('INSERT INTO extraction_cache (cache_key, result, created_at) VALUES (?, ?, ?)').run('k', '{"entities":[],"relationships":[]}', '2026-01-01T00:00:00.000Z');
      old.close();

      const store = new SqliteStore(path);
      try {
        const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
        const scope = { tenantId: 't1', kbId: kb.id };
        expect(await store.repositories.extractionCache.getCachedExtraction(scope, 'k')).toBeNull();
        await store.repositories.extractionCache.putCachedExtraction(scope, 'k', { entities: [], relationships: [] });
        expect(await store.repositories.extractionCache.getCachedExtraction(scope, 'k')).toEqual({ kbId: kb.id, result: { entities: [], relationships: [] } });
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts the chunks remaining of documents indexed before version 9', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    try {
      const path = join(dir, 'trellis.db');
      const before = new SqliteStore(path);
      const scope = await inFlightDocument(before);
      await before.close();
      // Back to version 8: no counter.
      const old = new Database(path);
      old.exec('ALTER TABLE documents DROP COLUMN chunks_remaining; DELETE FROM schema_migrations WHERE version = 9');
      old.close();

      const store = new SqliteStore(path);
      try {
        expect(await store.repositories.chunks.markChunkGraphed(scope, 'c1')).toBe(1);
        expect(await store.repositories.chunks.markChunkGraphed(scope, 'c2')).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("upgrades a file at main's version 9: the shared SQL's migrations follow as 10 to 12 and keep the document text", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    try {
      const path = join(dir, 'trellis.db');
      const old = new Database(path);
      old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)');
      for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= 9)) {
        old.exec(migration.sql);
        old.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, '2026-01-01T00:00:00.000Z');
      }
      const at = '2026-01-01T00:00:00.000Z';
      old.prepare('INSERT INTO knowledge_bases (id, tenant_id, name, description, settings, created_at) VALUES (?, ?, ?, ?, ?, ?)').run('kb1', 't1', 'kb', '', JSON.stringify(TEST_KB_SETTINGS), at);
      old
        .prepare(
          `INSERT INTO documents (id, tenant_id, kb_id, source_uri, filename, mime_type, content_hash, version, status, error, size_bytes, metadata, created_at, updated_at, chunks_remaining)
           VALUES ('d1', 't1', 'kb1', 'file:///a.txt', 'a.txt', 'text/plain', 'h', 1, 'graphed', NULL, 5, '{}', ?, ?, 0)`,
        )
        .run(at, at);
      old.prepare('INSERT INTO document_versions (document_id, version, tenant_id, kb_id, text) VALUES (?, ?, ?, ?, ?)').run('d1', 1, 't1', 'kb1', 'hello');
      old.close();

      const store = new SqliteStore(path);
      try {
        const scope = { tenantId: 't1', kbId: 'kb1' };
        expect(await store.repositories.documents.getDocumentText(scope, 'd1', 1)).toBe('hello');
        expect((await store.repositories.documents.findDocumentBySource(scope, 'file:///a.txt'))?.id).toBe('d1');
      } finally {
        await store.close();
      }
      const migrated = new Database(path, { readonly: true });
      try {
        const versions = migrated.prepare('SELECT version, name FROM schema_migrations WHERE version >= 8 ORDER BY version').all() as Array<{ version: number; name: string }>;
        expect(versions.map((v) => v.version)).toEqual([8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 25, 26, 27]);
        expect(versions.find((v) => v.version === 8)?.name).toBe('extraction cache per tenant and knowledge base');
        expect(versions.find((v) => v.version === 9)?.name).toBe('chunks remaining per document version');
        expect(migrated.prepare('SELECT redrive_count FROM documents').all()).toEqual([{ redrive_count: 0 }]);
      } finally {
        migrated.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('drops the FTS5 table of a file from before version 23, and searches its chunks, each under its knowledge base', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    try {
      const path = join(dir, 'trellis.db');
      const first = new SqliteStore(path);
      const kbs = [];
      for (const name of ['a', 'b']) kbs.push((await first.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name, description: '', settings: TEST_KB_SETTINGS })).id);
      for (const [i, kbId] of kbs.entries()) {
        const scope = { tenantId: 't1', kbId };
        await saveTestDocument(first, scope, `d${i}`);
        await first.repositories.chunks.upsertChunks(scope, [{ ...chunk(`d${i}`, 1, 0, `walrus colony ${i}`, 1), heading: i === 0 ? 'Arctic notes' : '' }]);
      }
      await first.close();
      // Back to version 22: migration 19's FTS5 table, filled as it was.
      const old = new Database(path);
      old.exec("CREATE VIRTUAL TABLE chunk_fts USING fts5 (chunk_id UNINDEXED, text, kb, tokenize = 'porter unicode61'); DELETE FROM schema_migrations WHERE version = 23");
      old.exec("INSERT INTO chunk_fts (chunk_id, text, kb) SELECT id, text, 'k' FROM chunks");
      old.close();

      const store = new SqliteStore(path);
      try {
        const found = async (kbId: string, query: string) => (await store.repositories.chunks.searchChunksFullText({ tenantId: 't1', kbId }, query, 5)).map((h) => h.chunk.text);
        expect(await found(kbs[0]!, 'walrus')).toEqual(['walrus colony 0']);
        expect(await found(kbs[1]!, 'walrus')).toEqual(['walrus colony 1']);
        // The heading is indexed with the text, as writes index it.
        expect(await found(kbs[0]!, 'arctic')).toEqual(['walrus colony 0']);
        expect(await found(kbs[1]!, 'arctic')).toEqual([]);
        const tables = new Database(path, { readonly: true });
        expect(tables.prepare("SELECT name FROM sqlite_master WHERE name = 'chunk_fts'").all()).toEqual([]);
        tables.close();
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('lists the conversations saved before version 14, titled by their first question', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-'));
    try {
      const path = join(dir, 'trellis.db');
      await new SqliteStore(path).close();
      // Back to version 13: no chats table, no condensed questions (and none of the later migrations).
      const old = new Database(path);
      old.exec(
        'DROP TABLE chats; ALTER TABLE chat_messages DROP COLUMN condensed_question; DELETE FROM schema_migrations WHERE version >= 14; DROP TABLE chat_engines; ' +
          'DROP TABLE community_changes; ALTER TABLE community_state DROP COLUMN changes_tracked; DROP TABLE llm_spend; DROP TABLE llm_paused_chunks; DROP TABLE outbox_events; ' +
          'DROP INDEX documents_by_title_key; ALTER TABLE documents DROP COLUMN title_key; ALTER TABLE documents DROP COLUMN title; DROP TABLE entity_name_terms; ' +
          'DROP INDEX community_members_of_entity; CREATE INDEX community_members_by_entity ON community_members (tenant_id, kb_id, entity_id); DROP INDEX entity_mentions_of_entity; DROP INDEX entity_nodes; ' +
          UNDO_22,
      );
      const insert = old.prepare('INSERT INTO chat_messages (tenant_id, kb_id, chat_id, role, content, citations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
      insert.run('t1', 'kb1', 'old-chat', 'user', 'Who founded the Radium Institute?', '[]', '2026-01-01T00:00:00.000Z');
      insert.run('t1', 'kb1', 'old-chat', 'assistant', 'Marie Curie [1]', '[{"index":1}]', '2026-01-01T00:00:00.000Z');
      insert.run('t1', 'kb1', 'old-chat', 'user', 'When?', '[]', '2026-01-02T00:00:00.000Z');
      insert.run('t1', 'kb1', 'old-chat', 'assistant', 'In 1909 [1]', '[]', '2026-01-02T00:00:00.000Z');
      old.close();

      const store = new SqliteStore(path);
      try {
        expect(await store.repositories.chats.listChats({ tenantId: 't1' }, { limit: 10 })).toEqual([
          { id: 'old-chat', kbId: 'kb1', title: 'Who founded the Radium Institute?', engine: '', messageCount: 4, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-02T00:00:00.000Z' },
        ]);
        expect((await store.repositories.chats.listChatMessages({ tenantId: 't1' }, 'old-chat')).map((m) => m.content)).toEqual(['Who founded the Radium Institute?', 'Marie Curie [1]', 'When?', 'In 1909 [1]']);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Last: it plans the statements every test above prepared.
describeSqliteQueryPlans();
