import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { MysqlStore } from '../src/mysql/mysql-store';
import { MYSQL_MIGRATIONS } from '../src/mysql/mysql-schema';
import type { StoreLogger } from '../src/mysql/store-logger';
import { VECTOR_SUPPORT_PROBE } from '../src/mysql/vector-sql';
import { TEST_KB_SETTINGS, vectorFor } from './store-contract';
import { describeStoreContracts } from './contract-suites';
import { describeFullTextReanalysis } from './full-text-contract';
import { describeSharedLlmBudget } from './llm-budget-contract';
import { inFlightDocument } from './chunk-progress-contract';
import { TestDatabases, describeOnMysql } from './mysql-test-databases';
import { describeEntityNameBackfill, describeEntityNameContract } from './entity-name-contract';
import type { NameTermRow } from './entity-name-contract';
import { describeEdgeIndexUpgrade } from './edge-index-contract';

/**
 * The MySQL-family adapter against a real server: MariaDB 10.11 locally and in CI (blob vector
 * path), TiDB when TRELLIS_TEST_MYSQL_URL points at one (VECTOR path). Every store gets a fresh
 * database, dropped at the end.
 */
const baseUrl = process.env.TRELLIS_TEST_MYSQL_URL;

interface LogLine {
  level: 'info' | 'warn';
  fields: Record<string, unknown>;
  message: string;
}

describeOnMysql('MysqlStore (TRELLIS_TEST_MYSQL_URL)', () => {
  const databases = new TestDatabases(baseUrl!, { dateStrings: true });
  const logs: LogLine[] = [];
  const logger: StoreLogger = {
    info: (fields, message) => logs.push({ level: 'info', fields, message }),
    warn: (fields, message) => logs.push({ level: 'warn', fields, message }),
  };
  const urlFor = (database: string) => databases.urlFor(database);
  const newDatabaseName = () => databases.newName();

  async function freshStore(): Promise<MysqlStore> {
    const store = await MysqlStore.connect(urlFor(newDatabaseName()), { poolSize: 4, logger });
    await store.migrate();
    return store;
  }

  async function query(sql: string, params: unknown[] = []): Promise<Array<Record<string, unknown>>> {
    const [rows] = await databases.admin.query(sql, params);
    return rows as Array<Record<string, unknown>>;
  }

  async function serverHasVectors(): Promise<boolean> {
    try {
      await databases.admin.query(VECTOR_SUPPORT_PROBE);
      return true;
    } catch {
      return false;
    }
  }

  describeStoreContracts('MysqlStore', freshStore);
  describeSharedLlmBudget('MysqlStore', async () => {
    const first = await freshStore();
    const second = await MysqlStore.connect(urlFor(databases.last), { poolSize: 4, logger });
    return [first, second];
  });

  describeEntityNameContract('MysqlStore', freshStore, async () =>
    (await query(`SELECT tenant_id AS tenantId, kb_id AS kbId, entity_id AS entityId, term FROM \`${databases.last}\`.entity_name_terms`)) as unknown as NameTermRow[],
  );
  describeEntityNameBackfill('MysqlStore', freshStore, async (store) => {
    await query(`DROP TABLE \`${databases.last}\`.entity_name_terms`);
    await query(`DELETE FROM \`${databases.last}\`.schema_migrations WHERE version = 21`);
    expect(await (store as MysqlStore).migrate()).toEqual([21]);
    return store;
  });

  // The re-analysis's statements, which a fresh database (no chunks yet) never sends.
  describeFullTextReanalysis('MysqlStore', freshStore, async (store) => {
    const db = `\`${databases.last}\``;
    const before = [`UPDATE ${db}.chunk_terms SET term = CONCAT('old-', term)`, `UPDATE ${db}.chunks SET fts_length = 1`, `UPDATE ${db}.kb_text_stats SET total_length = 7`];
    for (const statement of [...before, `DELETE FROM ${db}.schema_migrations WHERE version = 24`]) await query(statement);
    expect(await (store as MysqlStore).migrate()).toEqual([24]);
  });

  const relationshipIndexes = async () => (await query("SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'relationships'", [databases.last])).map((r) => String(r.INDEX_NAME));
  describeEdgeIndexUpgrade('MysqlStore', freshStore, async (store) => {
    const firstSchema = (end: string) => `DROP KEY relationship_heaviest_by_${end}, ADD KEY relationships_by_${end} (tenant_id, kb_id, ${end}_id)`;
    await query(`ALTER TABLE \`${databases.last}\`.relationships ${firstSchema('source')}, ${firstSchema('target')}`);
    await query(`DELETE FROM \`${databases.last}\`.schema_migrations WHERE version IN (22, 26)`);
    expect(await (store as MysqlStore).migrate()).toEqual([22, 26]);
    return store;
  }, relationshipIndexes);

  describe('migrations', () => {
    it('creates the database and schema from empty; running migrate again changes nothing', async () => {
      const database = newDatabaseName();
      const store = await MysqlStore.connect(urlFor(database), { logger });
      let rowsBefore: Array<Record<string, unknown>>;
      try {
        expect(await query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [database])).toHaveLength(1);
        expect(await store.migrate()).toEqual(MYSQL_MIGRATIONS.map((m) => m.version));
        const schema = () =>
          query(
            'SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION',
            [database],
          );
        const columnsBefore = await schema();
        rowsBefore = await migrations();
        expect(rowsBefore.map((r) => r.version)).toEqual(MYSQL_MIGRATIONS.map((m) => m.version));
        expect(new Set(columnsBefore.map((c) => c.TABLE_NAME))).toEqual(
          new Set([
            'schema_migrations', 'knowledge_bases', 'documents', 'document_texts', 'document_stages', 'chunks', 'chunk_terms', 'kb_text_stats',
            'entities', 'relationships', 'entity_mentions', 'relationship_mentions', 'extraction_cache', 'chat_messages', 'chats', 'chat_engines',
            'llm_usage', 'llm_spend', 'llm_paused_chunks', 'outbox_events', 'llm_buckets', 'llm_leases',
            'graph_overlays', 'graph_merges', 'graph_edit_chunks', 'graph_edits',
            'communities', 'community_members', 'community_state', 'community_changes', 'entity_name_terms',
          ]),
        );

        expect(await store.migrate()).toEqual([]);
        expect(await schema()).toEqual(columnsBefore);
        expect(await migrations()).toEqual(rowsBefore);
      } finally {
        await store.close();
      }

      // Another process (a second pod, the CLI) sees a current schema too.
      const again = await MysqlStore.connect(urlFor(database), { logger });
      try {
        expect(await again.migrate()).toEqual([]);
        expect(await migrations()).toEqual(rowsBefore);
      } finally {
        await again.close();
      }

      async function migrations() {
        return query(`SELECT version, name, applied_at FROM \`${database}\`.schema_migrations ORDER BY version`);
      }
    });

    it('replaces the tenant-less extraction cache of a version 7 database: its entries go, new ones are per tenant', async () => {
      const store = await freshStore();
      const database = databases.last;
      try {
        // Back to version 7: the old table, with an entry no tenant can be told from.
        await query(`DROP TABLE \`${database}\`.extraction_cache`);
        await query(`CREATE TABLE \`${database}\`.extraction_cache (cache_key VARCHAR(191) NOT NULL, result JSON NOT NULL, created_at DATETIME(3) NOT NULL, PRIMARY KEY (cache_key))`);
        await query(`INSERT INTO \`${database}\`.extraction_cache VALUES ('k', '{"entities":[],"relationships":[]}', NOW(3))`);
        await query(`DELETE FROM \`${database}\`.schema_migrations WHERE version = 8`);

        expect(await store.migrate()).toEqual([8]);
        const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
        const scope = { tenantId: 't1', kbId: kb.id };
        expect(await store.repositories.extractionCache.getCachedExtraction(scope, 'k')).toBeNull();
        await store.repositories.extractionCache.putCachedExtraction(scope, 'k', { entities: [], relationships: [] });
        expect(await store.repositories.extractionCache.getCachedExtraction(scope, 'k')).toEqual({ kbId: kb.id, result: { entities: [], relationships: [] } });
        expect(await store.migrate()).toEqual([]);
      } finally {
        await store.close();
      }
    });

    it('gives the postings of a version 18 database their chunk lengths, so BM25 ranks as before', async () => {
      const store = await freshStore();
      const database = databases.last;
      try {
        const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
        const scope = { tenantId: 't1', kbId: kb.id };
        await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'd', version: 1, sizeBytes: 1, metadata: {}, text: '' });
        // Same tf, different lengths: the short one ranks first only if lengths reach the ranking.
        const long = { id: 'a-long', documentId: 'd', version: 1, ordinal: 0, text: 'osmium among very many other words making this chunk much longer', heading: '', tokenCount: 9, contentHash: 'a', embedding: vectorFor(1) };
        const short = { ...long, id: 'b-short', ordinal: 1, text: 'osmium ore', contentHash: 'b' };
        await store.repositories.chunks.upsertChunks(scope, [long, short]);
        // Back to version 18: postings without lengths.
        await query(`ALTER TABLE \`${database}\`.chunk_terms DROP COLUMN fts_length`);
        await query(`DELETE FROM \`${database}\`.schema_migrations WHERE version = 19`);

        expect(await store.migrate()).toEqual([19]);
        expect(await query(`SELECT DISTINCT chunk_id, fts_length FROM \`${database}\`.chunk_terms ORDER BY chunk_id`)).toEqual([
          { chunk_id: 'a-long', fts_length: 11 },
          { chunk_id: 'b-short', fts_length: 2 },
        ]);
        expect((await store.repositories.chunks.searchChunksFullText(scope, 'osmium', 5)).map((h) => h.chunk.id)).toEqual(['b-short', 'a-long']);
      } finally {
        await store.close();
      }
    });

    it('counts the chunks remaining of documents indexed before version 9', async () => {
      const store = await freshStore();
      const database = databases.last;
      try {
        const scope = await inFlightDocument(store);
        // Back to version 8: no counter.
        await query(`ALTER TABLE \`${database}\`.documents DROP COLUMN chunks_remaining`);
        await query(`DELETE FROM \`${database}\`.schema_migrations WHERE version = 9`);
        expect(await store.migrate()).toEqual([9]);
        expect(await store.repositories.chunks.markChunkGraphed(scope, 'c1')).toBe(1);
        expect(await store.repositories.chunks.markChunkGraphed(scope, 'c2')).toBe(0);
      } finally {
        await store.close();
      }
    });

    it('takes the vector path the server supports, logs it, and builds the columns for it', async () => {
      const expected = (await serverHasVectors()) ? 'tidb-vector' : 'blob';
      const before = logs.length;
      const store = await freshStore();
      try {
        expect(store.vectorStorage).toBe(expected);
        const pathLog = logs.slice(before).find((l) => l.level === 'info' && l.fields.vectorStorage !== undefined);
        expect(pathLog?.fields.vectorStorage).toBe(expected);
        const database = databases.last;
        const [column] = await query(
          "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 'chunks' AND COLUMN_NAME = 'embedding'",
          [database],
        );
        expect(String(column?.DATA_TYPE).toLowerCase()).toBe(expected === 'blob' ? 'mediumblob' : 'vector');
      } finally {
        await store.close();
      }
    });

    it('names its server as OpenTelemetry does (db.system.name), from the version it reports', async () => {
      const [row] = await query('SELECT VERSION() AS version');
      const version = String(row?.version);
      const expected = /tidb/i.test(version) ? 'tidb' : /mariadb/i.test(version) ? 'mariadb' : 'mysql';
      const store = await freshStore();
      try {
        expect(store.databaseSystem).toBe(expected);
      } finally {
        await store.close();
      }
    });

    it('refuses a URL without a database, without echoing the password', async () => {
      const url = new URL(baseUrl!);
      url.pathname = '/';
      url.password = 'secret-pass';
      await expect(MysqlStore.connect(url.toString(), { logger })).rejects.toThrow(/must name a database/);
      await expect(MysqlStore.connect(url.toString(), { logger })).rejects.not.toThrow(/secret-pass/);
    });
  });

  describe('beyond the contract', () => {
    let store: MysqlStore;
    let scope: KbScope;

    beforeAll(async () => {
      store = await freshStore();
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: {
        chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '',
      } });
      scope = { tenantId: 't1', kbId: kb.id };
    });

    afterAll(async () => {
      await store.close();
    });

    async function addDocument(id: string, text = `text of ${id}`) {
      return store.repositories.documents.saveDocumentVersion(scope, {
        id, sourceUri: `${id}.txt`, filename: `${id}.txt`, mimeType: 'text/plain', contentHash: id, version: 1, sizeBytes: text.length, metadata: {}, text,
      });
    }

    function chunk(documentId: string, ordinal: number, text: string, heading = '') {
      return {
        id: stableId('chk', documentId, 1, ordinal), documentId, version: 1, ordinal, text, heading,
        tokenCount: text.split(' ').length, contentHash: stableId('h', text), embedding: vectorFor(ordinal + 1),
      };
    }

    it('sees graph and chunk writes made by another process through its cached vectors', async () => {
      const other = await MysqlStore.connect(urlFor(store['database'] as string), { poolSize: 2, logger });
      try {
        await addDocument('cache-doc');
        const first = chunk('cache-doc', 0, 'first cached chunk');
        await store.repositories.chunks.upsertChunks(scope, [first]);
        expect((await store.repositories.chunks.searchChunksByVector(scope, first.embedding, 10)).map((h) => h.chunk.id)).toContain(first.id);
        const second = chunk('cache-doc', 1, 'second chunk, written elsewhere');
        await other.repositories.chunks.upsertChunks(scope, [second]);
        expect((await store.repositories.chunks.searchChunksByVector(scope, second.embedding, 1))[0]?.chunk.id).toBe(second.id);
        // Searches side by side after another write: one refreshes the matrix, the others wait for it and find the row too.
        const third = chunk('cache-doc', 2, 'third chunk, written elsewhere too');
        await other.repositories.chunks.upsertChunks(scope, [third]);
        const sideBySide = await Promise.all([third, second, third, first].map((c) => store.repositories.chunks.searchChunksByVector(scope, c.embedding, 1)));
        expect(sideBySide.map((hits) => hits[0]?.chunk.id)).toEqual([third.id, second.id, third.id, first.id]);

        const name = (n: string) => n.toLowerCase();
        const a = { entityId: stableId('ent', 'cache-a'), name: 'A', normalizedName: name('cache-a'), type: 't', description: '', embedding: vectorFor(7) };
        const b = { entityId: stableId('ent', 'cache-b'), name: 'B', normalizedName: name('cache-b'), type: 't', description: '', embedding: vectorFor(8) };
        const relationship = { relationshipId: stableId('rel', 'cache-ab'), sourceId: a.entityId, targetId: b.entityId, label: 'knows', description: 'A knows B', strength: 5, embedding: vectorFor(99) };
        expect(await store.repositories.graphReads.searchRelationshipsByVector(scope, relationship.embedding, 5)).toEqual([]);
        await other.repositories.graphWrites.applyChunkExtraction(scope, second.id, [a, b], [relationship]);
        const found = await store.repositories.graphReads.searchRelationshipsByVector(scope, relationship.embedding, 1);
        expect(found[0]?.relationship.id).toBe(relationship.relationshipId);
        // Relationship vectors are kept as int8 codes in memory: scores are within a few thousandths.
        expect(found[0]?.score).toBeCloseTo(1, 2);
        expect((await store.repositories.graphReads.relationshipSimilarities(scope, relationship.embedding, [relationship.relationshipId])).get(relationship.relationshipId)).toBeCloseTo(1, 2);
      } finally {
        await other.close();
      }
    });

    it('keeps a document larger than one row allows, surrogate pairs intact', async () => {
      const text = `${'a'.repeat(999_999)}😀${'b'.repeat(1_500_000)}é`;
      await addDocument('big', text);
      expect(await store.repositories.documents.getDocumentText(scope, 'big', 1)).toBe(text);
      await addDocument('empty', '');
      expect(await store.repositories.documents.getDocumentText(scope, 'empty', 1)).toBe('');
    });

    it('ranks by BM25: rarer terms and denser chunks first, plurals match, headings count', async () => {
      await addDocument('ft');
      await store.repositories.chunks.upsertChunks(scope, [
        chunk('ft', 0, 'The element polonium; polonium is rare. Polonium again.'),
        chunk('ft', 1, 'Polonium is mentioned once among many other common words here'),
        chunk('ft', 2, 'Nothing relevant at all'),
        chunk('ft', 3, 'Body text without the word', 'Elements of chemistry'),
      ]);
      const hits = await store.repositories.chunks.searchChunksFullText(scope, 'polonium', 10);
      expect(hits.map((h) => h.chunk.ordinal)).toEqual([0, 1]);
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
      expect((await store.repositories.chunks.searchChunksFullText(scope, 'elements', 10)).map((h) => h.chunk.ordinal).sort()).toEqual([0, 3]);
      expect(await store.repositories.chunks.searchChunksFullText(scope, 'the of is', 10)).toEqual([]);
      // Another tenant naming the same knowledge base id sees nothing.
      expect(await store.repositories.chunks.searchChunksFullText({ tenantId: 't2', kbId: scope.kbId }, 'polonium', 10)).toEqual([]);
      expect(await store.repositories.chunks.searchChunksByVector({ tenantId: 't2', kbId: scope.kbId }, vectorFor(1), 10)).toEqual([]);
    });

    it('re-upserting a chunk with new text replaces its postings', async () => {
      await addDocument('re');
      await store.repositories.chunks.upsertChunks(scope, [chunk('re', 0, 'zirconium crystals')]);
      await store.repositories.chunks.upsertChunks(scope, [{ ...chunk('re', 0, 'hafnium crystals'), id: stableId('chk', 're', 1, 0) }]);
      expect(await store.repositories.chunks.searchChunksFullText(scope, 'zirconium', 5)).toEqual([]);
      expect((await store.repositories.chunks.searchChunksFullText(scope, 'hafnium', 5)).map((h) => h.chunk.text)).toEqual(['hafnium crystals']);
    });

    it('ends with one entity whose count is every writer when many write it at once', async () => {
      await addDocument('many');
      const chunks = Array.from({ length: 8 }, (_, i) => chunk('many', i, `mention ${i}`));
      await store.repositories.chunks.upsertChunks(scope, chunks);
      const shared = (description: string) => ({
        entityId: stableId('ent', scope.kbId, 'crowded'), name: 'Crowded', normalizedName: 'crowded', type: 'concept', description, embedding: vectorFor(7),
      });
      await Promise.all(chunks.map((c, i) => store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [shared(`From ${i}.`)], [])));
      const [entity] = await store.repositories.graphReads.getEntities(scope, [stableId('ent', scope.kbId, 'crowded')]);
      expect(entity?.mentionCount).toBe(8);
      expect(entity?.description.split(' ').length).toBe(16);
    });

    it('keeps counts equal to mentions when writers of overlapping entities race a delete', async () => {
      const names = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
      const mention = (name: string, from: string) => ({
        entityId: stableId('ent', scope.kbId, name), name, normalizedName: name, type: 'concept', description: `${name} from ${from}.`, embedding: vectorFor(name.length),
      });
      for (const doc of ['race-a', 'race-b', 'race-c']) {
        await addDocument(doc);
        await store.repositories.chunks.upsertChunks(scope, names.map((name, i) => chunk(doc, i, `${name} appears here`)));
      }
      const writes: Array<Promise<unknown>> = [];
      for (const doc of ['race-a', 'race-b', 'race-c']) {
        names.forEach((_, i) => {
          // Overlapping sets in different orders: the lock-order and retry paths both get used.
          const entities = [...new Set([names[i]!, names[(i * 3 + 1) % 5]!, names[(i * 2 + 4) % 5]!])].map((n) => mention(n, `${doc}${i}`));
          const [source, target] = entities;
          const relationships = source && target
            ? [{ relationshipId: stableId('rel', source.entityId, target.entityId), sourceId: source.entityId, targetId: target.entityId, label: 'near', description: `near in ${doc}`, strength: 2, embedding: vectorFor(3) }]
            : [];
          writes.push(store.repositories.graphWrites.applyChunkExtraction(scope, stableId('chk', doc, 1, i), entities, relationships));
        });
      }
      writes.push(store.repositories.documents.deleteDocument(scope, 'race-c'));
      await Promise.all(writes);

      const graph = await store.repositories.graphReads.exportGraph(scope);
      const raced = graph.entities.filter((e) => names.includes(e.normalizedName));
      expect(raced.length).toBeGreaterThan(0);
      for (const entity of raced) {
        const chunkIds = (await store.repositories.graphReads.chunkIdsForEntities(scope, [entity.id])).get(entity.id) ?? [];
        expect(entity.mentionCount).toBe(chunkIds.length);
        expect(entity.description).not.toContain('race-c');
      }
      for (const relationship of graph.relationships) {
        const chunkIds = (await store.repositories.graphReads.chunkIdsForRelationships(scope, [relationship.id])).get(relationship.id) ?? [];
        expect(relationship.mentionCount).toBe(chunkIds.length);
      }
    });
  });
});
