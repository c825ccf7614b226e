import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MysqlStore } from '../src/mysql/mysql-store';
import { MYSQL_MIGRATIONS, SCHEMA_MIGRATIONS_DDL } from '../src/mysql/mysql-schema';
import type { StoreLogger } from '../src/mysql/store-logger';
import { EMBEDDING_TABLES, VECTOR_SUPPORT_PROBE, tidbVectorSql } from '../src/mysql/vector-sql';
import type { VectorStorage } from '../src/mysql/vector-sql';
import type { StoreConnection } from '../src/repositories/store-connection';
import type { TrellisRepositories } from '../src/trellis-store';
import { describeStoreContract } from './store-contract';
import { describeConcurrentGraphWritesContract } from './concurrent-graph-writes-contract';
import { describeDocumentPagingContract } from './document-paging-contract';
import { describeExtractionCacheContract } from './extraction-cache-contract';
import { describeCommunityContract } from './community-contract';
import { describeChatContract } from './chat-contract';
import { describeCommunityChangeContract } from './community-change-contract';
import { describeLlmBudgetContract, describeSharedLlmBudget } from './llm-budget-contract';
import { describeGraphEditContract } from './graph-edits-contract';
import { describeStuckWorkContract } from './stuck-work-contract';
import { describeOutboxContract } from './outbox-contract';
import { describeChunkProgressContract } from './chunk-progress-contract';
import { describeEntityNameBackfill, describeEntityNameContract } from './entity-name-contract';
import { describeFullTextReanalysis } from './full-text-contract';
import type { NameTermRow } from './entity-name-contract';
import { parseWithTidb } from './tidb-parser';
import { StatementCapture, TidbStandIn } from './tidb-stand-in';
import { TestDatabases, describeOnMysql } from './mysql-test-databases';

/**
 * Every statement the MySQL-family adapter sends to TiDB, judged by TiDB's own SQL parser
 * (tools/tidb-sql-check, the pingcap/tidb parser module built with Go).
 *
 * How the statements are collected, and why this way: no list of statements is kept by hand
 * (it would go stale with the next query). The adapter's real code runs the whole store contract
 * (store, LLM budget, graph edits) on the real MariaDB, with a tap on every statement it sends
 * (MysqlStoreOptions.statementTap). The tap records the text as the adapter wrote it and hands
 * MariaDB a stand-in's translation of what only TiDB has (tidb-stand-in.ts: VECTOR columns,
 * VEC_* functions, TiDB's collations, ERROR 8200 for the HNSW index without TiFlash). So the
 * store really takes its TiDB paths — the capabilities probe succeeds, the schema gets VECTOR
 * columns, the server ranks with VEC_COSINE_DISTANCE — with real rows flowing between
 * statements, and the contract's assertions hold on that path too. A recording session with
 * canned answers would not get past the first statement whose answer matters (a lock, a read
 * before a write). The same workload runs a second time as a TiDB from before vector search (a
 * schema with BLOB embeddings, which the adapter keeps on such a database for good).
 *
 * What is checked is what TiDB receives: mysql2 binds `?` client-side, so each distinct text
 * is checked once, with the parameters it was first sent with bound in (the same mysql2
 * formatting the driver applies). TypeORM's own statements (START TRANSACTION, ...) pass the
 * tap and are checked as well. The parser decides syntax and names it knows (collations,
 * types); what only a running TiDB decides (a missing TiFlash, privileges) is out of its reach.
 */
const baseUrl = process.env.TRELLIS_TEST_MYSQL_URL;

/** Every method of every repository, and of the connection; the compiler keeps the lists complete. */
const REPOSITORY_METHODS = {
  knowledgeBases: ['createKnowledgeBase', 'listKnowledgeBases', 'findKnowledgeBase', 'updateKnowledgeBase', 'deleteKnowledgeBase'],
  documents: ['findDocumentBySource', 'saveDocumentVersion', 'saveFailedDocument', 'getDocument', 'listDocuments', 'countDocuments', 'documentTitles', 'getDocumentText', 'setDocumentStatus', 'deleteDocument', 'deleteStaleVersions', 'listUnfinishedDocuments', 'listStuckDocuments', 'recordRedrive', 'recordStage', 'listStages', 'listProgress', 'listIndexingProgress'],
  chunks: ['upsertChunks', 'getChunk', 'getChunks', 'listChunks', 'setChunkStatus', 'markChunkGraphed', 'countChunksByStatus', 'listStuckChunks', 'chunkIdsOfDocumentsTitled', 'searchChunksByVector', 'searchChunksFullText'],
  extractionCache: ['getCachedExtraction', 'putCachedExtraction'],
  graphWrites: ['applyChunkExtraction', 'listEntityCandidates', 'entityMentionsOfSameContent'],
  graphSummaries: ['listPendingSummaries', 'listScopesWithPendingSummaries', 'saveSummaries'],
  graphReads: ['getEntities', 'getEntityNodes', 'findEntitiesByNormalizedName', 'searchEntitiesByName', 'searchEntityNodesByName', 'searchEntitiesByVector', 'searchRelationshipsByVector', 'relationshipSimilarities', 'getRelationships', 'relationshipsOfEntities', 'relationshipEdgesOfEntities', 'chunkIdsForRelationships', 'chunkIdsForEntities', 'entityIdsForChunks', 'exportGraph'],
  graphEdits: ['updateEntity', 'updateRelationship', 'deleteEntity', 'deleteRelationship', 'createManualEntity', 'mergeEntities', 'undoGraphEdit', 'getGraphEdit', 'listGraphEdits'],
  llmUsage: ['addLlmUsage', 'getDocumentLlmUsage', 'getKnowledgeBaseLlmUsage', 'getLlmSpend'],
  llmBudget: ['takeFromBucket', 'acquireLease', 'releaseLease'],
  budgetPauses: ['pauseChunk', 'listPausedChunks', 'countPausedChunks', 'listScopesWithPausedChunks', 'unpauseChunks'],
  chats: ['saveChatTurn', 'getChat', 'listChats', 'listChatMessages', 'deleteChat'],
  chatEngines: ['createChatEngine', 'getChatEngine', 'listChatEngines', 'updateChatEngine', 'deleteChatEngine'],
  communities: ['listCommunities', 'getCommunity', 'listCommunitiesOfEntities', 'listAssignedEntities', 'countUnassignedEntities', 'countCommunities', 'listCommunityChanges', 'saveCommunities', 'markCommunitiesChanged', 'listCommunityRefreshesDue', 'getCommunityState'],
  outbox: ['appendOutboxEvents', 'listOutboxEvents', 'deleteOutboxEvents', 'countOutboxEvents'],
} as const satisfies { [K in keyof TrellisRepositories]: ReadonlyArray<keyof TrellisRepositories[K]> };
const CONNECTION_METHODS = ['ping', 'close'] as const satisfies ReadonlyArray<keyof StoreConnection>;
type Unlisted =
  | { [K in keyof TrellisRepositories]: Exclude<keyof TrellisRepositories[K], (typeof REPOSITORY_METHODS)[K][number]> }[keyof TrellisRepositories]
  | Exclude<keyof StoreConnection, (typeof CONNECTION_METHODS)[number]>;
const storeMethodsComplete: [Unlisted] extends [never] ? true : Unlisted = true;
const STORE_METHODS: readonly string[] = [...Object.values(REPOSITORY_METHODS).flat(), ...CONNECTION_METHODS];

/** The store, recording which methods of its repositories (and of its connection) its callers use. */
function tracked(store: MysqlStore, used: Set<string>): MysqlStore {
  const recording = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, key) {
        const value: unknown = Reflect.get(t, key, t);
        if (typeof value !== 'function') return value;
        used.add(String(key));
        return (value as (...args: unknown[]) => unknown).bind(t);
      },
    });
  const repositories = Object.fromEntries(Object.entries(store.repositories).map(([name, repository]: [string, object]) => [name, recording(repository)])) as unknown as TrellisRepositories;
  const connection = recording(store);
  return new Proxy(store, { get: (target, key) => (key === 'repositories' ? repositories : Reflect.get(connection, key, target)) });
}

function rejected(statements: readonly string[]): string[] {
  return parseWithTidb(statements).flatMap((v, i) => (v.ok ? [] : [`${v.error}\n    in: ${statements[i]!.slice(0, 2000)}`]));
}

describe('TiDB SQL checker (TiDB parser)', () => {
  it('accepts TiDB vector DDL and search, rejects what TiDB does not have, with line and column', () => {
    const verdicts = parseWithTidb([
      'CREATE TABLE t (id INT PRIMARY KEY, e VECTOR(3), VECTOR INDEX idx ((VEC_COSINE_DISTANCE(e))) USING HNSW)',
      "SELECT id FROM t ORDER BY VEC_COSINE_DISTANCE(e, '[1,2,3]') LIMIT 5",
      // MariaDB-only: INSERT ... RETURNING, and its no-pad binary collation.
      'INSERT INTO t (id) VALUES (1) RETURNING id',
      'CREATE TABLE u (id INT) COLLATE=utf8mb4_nopad_bin',
      'SELECT 1; SELECT 2',
    ]);
    expect(verdicts.slice(0, 2)).toEqual([{ ok: true }, { ok: true }]);
    expect(verdicts[2]).toEqual({ ok: false, error: expect.stringMatching(/line 1 column \d+ near "RETURNING id"/) });
    expect(verdicts[3]).toEqual({ ok: false, error: expect.stringContaining("Unknown collation: 'utf8mb4_nopad_bin'") });
    expect(verdicts[4]).toEqual({ ok: false, error: 'expected one statement, found 2' });
  });

  it('accepts the schema as migrations render it for TiDB, VECTOR columns and HNSW indexes included', () => {
    const context = { collation: 'utf8mb4_0900_bin', embeddingColumnType: tidbVectorSql.embeddingColumnType };
    const ddl = [SCHEMA_MIGRATIONS_DDL(context), ...MYSQL_MIGRATIONS.flatMap((m) => m.statements(context))];
    const indexes = EMBEDDING_TABLES.map((table) => tidbVectorSql.vectorIndexDdl(table)!);
    expect(ddl.filter((s) => / embedding VECTOR NULL/.test(s))).toHaveLength(EMBEDDING_TABLES.length);
    expect(rejected([...ddl, ...indexes])).toEqual([]);
  });
});

describeOnMysql('every statement the adapter sends to TiDB (stand-in on TRELLIS_TEST_MYSQL_URL)', () => {
  const capture = new StatementCapture();
  const usedMethods = new Map<VectorStorage, Set<string>>();
  const databases = new TestDatabases(baseUrl!);

  for (const flavour of [
    { name: 'TiDB with vector search', storage: 'tidb-vector' as const },
    { name: 'TiDB before vector search', storage: 'blob' as const },
  ]) {
    describe(flavour.name, () => {
      const logs: Array<{ level: string; fields: Record<string, unknown> }> = [];
      const logger: StoreLogger = {
        info: (fields) => logs.push({ level: 'info', fields }),
        warn: (fields) => logs.push({ level: 'warn', fields }),
      };
      const used = new Set<string>();
      usedMethods.set(flavour.storage, used);
      let standIn: TidbStandIn;

      beforeAll(async () => {
        standIn = await TidbStandIn.install(databases.admin, { vectors: flavour.storage === 'tidb-vector' });
      });

      afterAll(async () => {
        await standIn.uninstall();
      });

      const connect = (database: string) => MysqlStore.connect(databases.urlFor(database), { poolSize: 4, logger, statementTap: standIn.tap(capture) });

      async function freshStore(): Promise<MysqlStore> {
        const store = await connect(databases.newName());
        await store.migrate();
        return tracked(store, used);
      }

      describeStoreContract(flavour.name, freshStore);
      describeConcurrentGraphWritesContract(flavour.name, freshStore);
      describeDocumentPagingContract(flavour.name, freshStore);
      describeLlmBudgetContract(flavour.name, freshStore);
      describeSharedLlmBudget(flavour.name, async () => [await freshStore(), tracked(await connect(databases.last), used)]);
      describeGraphEditContract(flavour.name, freshStore);
      describeChunkProgressContract(flavour.name, freshStore);
      describeStuckWorkContract(flavour.name, freshStore);
      describeOutboxContract(flavour.name, freshStore);
      describeExtractionCacheContract(flavour.name, freshStore);
      describeCommunityContract(flavour.name, freshStore);
      describeChatContract(flavour.name, freshStore);
      describeCommunityChangeContract(flavour.name, freshStore);
      describeEntityNameContract(flavour.name, freshStore, async () => {
        const [rows] = await databases.admin.query(`SELECT tenant_id AS tenantId, kb_id AS kbId, entity_id AS entityId, term FROM \`${databases.last}\`.entity_name_terms`);
        return rows as NameTermRow[];
      });
      // The backfill's statements, which a fresh database (no entities yet) never sends.
      describeEntityNameBackfill(flavour.name, freshStore, async (store) => {
        await databases.admin.query(`DROP TABLE \`${databases.last}\`.entity_name_terms`);
        await databases.admin.query(`DELETE FROM \`${databases.last}\`.schema_migrations WHERE version = 21`);
        await (store as MysqlStore).migrate();
        return store;
      });
      // The re-analysis's statements, which a fresh database (no chunks yet) never sends.
      describeFullTextReanalysis(flavour.name, freshStore, async (store) => {
        const db = `\`${databases.last}\``;
        const before = [`UPDATE ${db}.chunk_terms SET term = CONCAT('old-', term)`, `UPDATE ${db}.chunks SET fts_length = 1`, `UPDATE ${db}.kb_text_stats SET total_length = 7`];
        for (const statement of [...before, `DELETE FROM ${db}.schema_migrations WHERE version = 24`]) await databases.admin.query(statement);
        expect(await (store as MysqlStore).migrate()).toEqual([24]);
      });

      it(`keeps embeddings on the ${flavour.storage} path, and migrating again changes nothing`, async () => {
        const before = logs.length;
        const store = await freshStore();
        try {
          expect(store.vectorStorage).toBe(flavour.storage);
          expect(await store.migrate()).toEqual([]);
        } finally {
          await store.close();
        }
        const exactSearch = logs.slice(before).find((l) => l.level === 'warn');
        if (flavour.storage === 'tidb-vector') {
          // The HNSW DDL was sent, and refused as a cluster without TiFlash refuses it.
          expect(exactSearch?.fields.failures).toEqual(expect.arrayContaining([expect.stringContaining('TiFlash store count is 0')]));
        } else {
          expect(exactSearch).toBeUndefined();
        }
      });
    });
  }

  describe('TiDB parser', () => {
    it('accepts every statement the adapter sent, as TiDB would receive it', () => {
      const statements = capture.statements;
      expect(rejected(statements.map((s) => s.bound))).toEqual([]);
    });

    it('judged a capture that covers the whole store API and the TiDB-specific statements', () => {
      expect(storeMethodsComplete).toBe(true);
      for (const [storage, used] of usedMethods) {
        expect({ storage, unused: STORE_METHODS.filter((m) => !used.has(m)) }).toEqual({ storage, unused: [] });
      }
      const sql = capture.statements.map((s) => s.sql);
      const some = (pattern: RegExp) => sql.filter((s) => pattern.test(s)).length;
      expect(sql.length).toBeGreaterThan(150);
      expect(sql).toContain(VECTOR_SUPPORT_PROBE);
      expect(some(/^CREATE TABLE IF NOT EXISTS chunks \([\s\S]* embedding VECTOR NULL[\s\S]*COLLATE=utf8mb4_0900_bin$/)).toBe(1);
      expect(some(/^CREATE TABLE IF NOT EXISTS chunks \([\s\S]* embedding MEDIUMBLOB NULL/)).toBe(1);
      expect(some(/^ALTER TABLE \w+ ADD VECTOR INDEX \w+ \(\(VEC_COSINE_DISTANCE\(embedding\)\)\) USING HNSW$/)).toBe(EMBEDDING_TABLES.length);
      for (const table of ['chunks c', 'entities e', 'relationships r']) {
        expect(some(new RegExp(`^SELECT .*VEC_COSINE_DISTANCE.* FROM ${table}\\b.* ORDER BY VEC_COSINE_DISTANCE\\(.*\\) LIMIT \\?$`, 's'))).toBeGreaterThan(0);
      }
      expect(some(/ON DUPLICATE KEY UPDATE/)).toBeGreaterThan(5);
      expect(some(/BIT_XOR\(CRC32\(/)).toBeGreaterThan(0);
      expect(sql).toEqual(expect.arrayContaining(['START TRANSACTION', 'COMMIT', 'SELECT GET_LOCK(?, ?) AS locked']));
    });
  });
});
