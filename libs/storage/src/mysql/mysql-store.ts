import type { DataSource } from 'typeorm';
import { ErrorCode, TrellisError, stableId } from '@trellis/contracts';
import type { IndexStatus, KbScope, TenantScope } from '@trellis/contracts';
import type {
  ChatTurn,
  ChunkFilter,
  ChunkRecord,
  DocumentRecord,
  EntityCandidate,
  EntityMentionWrite,
  EntityRecord,
  ExtractionResult,
  KbSettings,
  KnowledgeBaseRecord,
  LlmUsage,
  NewChunk,
  NewDocumentVersion,
  PendingSummary,
  RelationshipMentionWrite,
  RelationshipRecord,
  ScoredChunk,
  ScoredEntity,
  ScoredRelationship,
  StageEvent,
  StageRecord,
  SummaryUpdate,
} from '../records';
import type { TrellisStore } from '../trellis-store';
import { PooledSql, errnoOf } from './mysql-session';
import { createDataSource, prepareServer } from './mysql-connection';
import type { ServerCapabilities } from './mysql-capabilities';
import { applyMigrations } from './mysql-migrator';
import { parseMysqlUrl } from './mysql-url';
import { CHUNK_COLUMNS, CURRENT_CHUNKS, batches, marks, readJson, toChunk, toDocument, toKnowledgeBase, toSqlTime } from './mysql-rows';
import type { VectorSql, VectorStorage } from './vector-sql';
import { VectorPath } from './vector-path';
import { listStages, recordStage } from './document-stages';
import { MysqlVectorRanking } from './vector-search';
import { invertedIndex } from './fulltext-index';
import { chunkCandidates } from '../sql/vector-ranking';
import type { SqlEngine } from '../sql/sql-engine';
import { SqlGraphReads } from '../sql/graph-read-sql';
import { prepareChunks, writeChunks } from './chunk-writes';
import { sourceHash, upsertDocumentRow, writeDocumentText } from './document-writes';
import { removeDocumentChunks, writeChunkExtraction } from '../sql/graph-write-sql';
import * as summaries from '../sql/summary-sql';
import { SqlGraphEdits } from '../sql/graph-edits-sql';
import { GraphEditSession } from '../sql/graph-edit-session';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from '../graph-edit-records';
import { stderrStoreLogger } from './store-logger';
import { SqlLlmBudget } from '../sql/llm-budget-sql';
import { mysqlDialect } from './mysql-dialect';
import type { SqlDialect } from '../sql/sql-dialect';
import type { StoreLogger } from './store-logger';

export interface MysqlStoreOptions {
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** Create the database named in the URL when it is missing; default true. */
  createDatabase?: boolean;
  /** Where the store reports its vector path; default JSON lines on stderr. */
  logger?: StoreLogger;
}

const ER_DUP_ENTRY = 1062;
/** Every table with rows of a knowledge base, dependents first. */
const KB_TABLES = [
  'entity_mentions', 'relationship_mentions', 'relationships', 'entities', 'chunk_terms', 'kb_text_stats',
  'chunks', 'document_texts', 'document_stages', 'documents', 'chat_messages', 'llm_usage',
  'graph_overlays', 'graph_merges', 'graph_edit_chunks', 'graph_edits',
] as const;

/**
 * The distributed store, on TiDB or any MySQL-protocol server (MariaDB here and in CI). Same
 * behaviour as the SQLite adapter, checked by the same contract suite. Embeddings live in VECTOR
 * columns ranked by the server where the server has them (TiDB), otherwise in BLOBs ranked here.
 */
export class MysqlStore implements TrellisStore {
  private readonly sql: PooledSql;
  private readonly vectorPath: VectorPath;
  private readonly llm: SqlLlmBudget;
  private readonly dialect: SqlDialect;
  private readonly engine: SqlEngine;
  private readonly graph: SqlGraphReads;

  private constructor(
    private readonly dataSource: DataSource,
    private readonly database: string,
    private readonly server: ServerCapabilities,
    logger: StoreLogger,
  ) {
    this.sql = new PooledSql(dataSource);
    this.vectorPath = new VectorPath(server, database, logger);
    this.dialect = mysqlDialect(() => this.vectorPath.sql);
    this.llm = new SqlLlmBudget(this.sql, this.dialect);
    this.engine = { dialect: this.dialect, fullText: invertedIndex, vectors: new MysqlVectorRanking(() => this.vectorPath.sql) };
    this.graph = new SqlGraphReads(this.sql, this.engine);
  }

  /** Opens a pool on `mysql://user:pass@host:port/db`, creating the database if missing. */
  static async connect(url: string, options: MysqlStoreOptions = {}): Promise<MysqlStore> {
    const settings = parseMysqlUrl(url);
    const server = await prepareServer(settings, options.createDatabase ?? true);
    const dataSource = await createDataSource(settings, settings.database, options.poolSize ?? 10);
    await dataSource.initialize();
    const store = new MysqlStore(dataSource, settings.database, server, options.logger ?? stderrStoreLogger);
    try {
      await store.vectorPath.settle(store.sql);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The server behind the store as OpenTelemetry's `db.system.name` spells it, from the version probed at connect. */
  get databaseSystem(): 'tidb' | 'mariadb' | 'mysql' {
    if (/tidb/i.test(this.server.version)) return 'tidb';
    return /mariadb/i.test(this.server.version) ? 'mariadb' : 'mysql';
  }

  /** How this store keeps and ranks embeddings. */
  get vectorStorage(): VectorStorage {
    return this.vectors.storage;
  }

  private get vectors(): VectorSql {
    return this.vectorPath.sql;
  }

  /**
   * Brings the schema up to date; running it again changes nothing. On TiDB it also tries to
   * build the HNSW indexes still missing. Resolves to the migration versions applied now.
   */
  async migrate(): Promise<number[]> {
    const applied = await applyMigrations(this.sql, this.database, {
      collation: this.server.collation,
      embeddingColumnType: this.vectors.embeddingColumnType,
    });
    await this.vectorPath.settle(this.sql);
    await this.vectorPath.ensureIndexes(this.sql);
    return applied;
  }

  // --- knowledge bases -------------------------------------------------------------------

  async createKnowledgeBase(scope: TenantScope, input: { name: string; description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord> {
    const id = stableId('kb', scope.tenantId, input.name);
    const createdAt = new Date().toISOString();
    try {
      await this.sql.exec(
        'INSERT INTO knowledge_bases (tenant_id, id, name, description, settings, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        [scope.tenantId, id, input.name, input.description, JSON.stringify(input.settings), toSqlTime(createdAt)],
      );
    } catch (error) {
      if (errnoOf(error) === ER_DUP_ENTRY) throw new TrellisError(ErrorCode.AlreadyExists, `knowledge base "${input.name}" already exists`);
      throw error;
    }
    return { id, tenantId: scope.tenantId, name: input.name, description: input.description, settings: input.settings, createdAt };
  }

  async listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]> {
    return (await this.sql.rows('SELECT * FROM knowledge_bases WHERE tenant_id = ? ORDER BY name', [scope.tenantId])).map(toKnowledgeBase);
  }

  async findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null> {
    const [row] = await this.sql.rows(
      'SELECT * FROM knowledge_bases WHERE tenant_id = ? AND (id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1',
      [scope.tenantId, idOrName, idOrName, idOrName],
    );
    return row ? toKnowledgeBase(row) : null;
  }

  async updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null> {
    await this.sql.exec('UPDATE knowledge_bases SET description = ?, settings = ? WHERE tenant_id = ? AND id = ?', [
      changes.description,
      JSON.stringify(changes.settings),
      scope.tenantId,
      scope.kbId,
    ]);
    return this.findKnowledgeBase(scope, scope.kbId);
  }

  async deleteKnowledgeBase(scope: KbScope): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      for (const table of KB_TABLES) await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ?`, [scope.tenantId, scope.kbId]);
      return (await tx.exec('DELETE FROM knowledge_bases WHERE tenant_id = ? AND id = ?', [scope.tenantId, scope.kbId])) > 0;
    });
  }

  async countDocuments(scope: KbScope): Promise<number> {
    const [row] = await this.sql.rows('SELECT COUNT(*) AS n FROM documents WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    return Number(row?.n ?? 0);
  }

  // --- documents -------------------------------------------------------------------------

  async findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null> {
    const [row] = await this.sql.rows(
      'SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? AND source_hash = ? AND source_uri = ?',
      [scope.tenantId, scope.kbId, sourceHash(sourceUri), sourceUri],
    );
    return row ? toDocument(row) : null;
  }

  async saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion): Promise<DocumentRecord> {
    await this.sql.transaction(async (tx) => {
      await writeDocumentText(tx, scope, doc.id, doc.version, doc.text);
      await upsertDocumentRow(tx, scope, doc, 'pending', null);
    });
    return this.requireDocument(scope, doc.id);
  }

  async saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord> {
    await upsertDocumentRow(this.sql, scope, doc, 'failed', error);
    return this.requireDocument(scope, doc.id);
  }

  private async requireDocument(scope: KbScope, documentId: string): Promise<DocumentRecord> {
    const document = await this.getDocument(scope, documentId);
    if (document === null) throw TrellisError.unavailable(`document ${documentId} vanished right after it was written`);
    return document;
  }

  async getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null> {
    const [row] = await this.sql.rows('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? AND id = ?', [scope.tenantId, scope.kbId, documentId]);
    return row ? toDocument(row) : null;
  }

  async listDocuments(scope: KbScope): Promise<DocumentRecord[]> {
    return (await this.sql.rows('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? ORDER BY source_uri', [scope.tenantId, scope.kbId])).map(toDocument);
  }

  async getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null> {
    const rows = await this.sql.rows(
      'SELECT text FROM document_texts WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? ORDER BY part',
      [scope.tenantId, scope.kbId, documentId, version],
    );
    return rows.length === 0 ? null : rows.map((r) => String(r.text)).join('');
  }

  async setDocumentStatus(scope: KbScope, documentId: string, version: number, status: IndexStatus, error: string | null = null): Promise<void> {
    await this.sql.exec(
      'UPDATE documents SET status = ?, error = ?, updated_at = ? WHERE tenant_id = ? AND kb_id = ? AND id = ? AND version = ?',
      [status, error, toSqlTime(new Date().toISOString()), scope.tenantId, scope.kbId, documentId, version],
    );
  }

  async countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>> {
    const rows = await this.sql.rows(
      `SELECT c.status AS status, COUNT(*) AS n FROM ${CURRENT_CHUNKS} WHERE c.tenant_id = ? AND c.kb_id = ? AND c.document_id = ? GROUP BY c.status`,
      [scope.tenantId, scope.kbId, documentId],
    );
    return Object.fromEntries(rows.map((r) => [String(r.status), Number(r.n)]));
  }

  async deleteDocument(scope: KbScope, documentId: string): Promise<boolean> {
    return this.sql.transaction(async (tx) => {
      await removeDocumentChunks(tx, this.engine, scope, documentId);
      for (const table of ['document_texts', 'document_stages']) {
        await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ?`, [scope.tenantId, scope.kbId, documentId]);
      }
      return (await tx.exec('DELETE FROM documents WHERE tenant_id = ? AND kb_id = ? AND id = ?', [scope.tenantId, scope.kbId, documentId])) > 0;
    });
  }

  async deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const removed = await removeDocumentChunks(tx, this.engine, scope, documentId, currentVersion);
      for (const table of ['document_texts', 'document_stages']) {
        await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version < ?`, [scope.tenantId, scope.kbId, documentId, currentVersion]);
      }
      return removed;
    });
  }

  async listUnfinishedDocuments(): Promise<Array<KbScope & { documentId: string; version: number; status: IndexStatus }>> {
    // Oldest first: the documents that have waited longest are re-driven first.
    const rows = await this.sql.rows(
      `SELECT tenant_id, kb_id, id, version, status FROM documents WHERE status NOT IN ('graphed', 'failed') ORDER BY updated_at, tenant_id, kb_id, id`,
    );
    return rows.map((r) => ({
      tenantId: String(r.tenant_id),
      kbId: String(r.kb_id),
      documentId: String(r.id),
      version: Number(r.version),
      status: String(r.status) as IndexStatus,
    }));
  }

  // --- chunks ----------------------------------------------------------------------------

  async upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void> {
    const prepared = prepareChunks(chunks);
    if (prepared.ids.length === 0) return;
    await this.sql.transaction((tx) => writeChunks(tx, this.vectors, scope, prepared));
  }

  async getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null> {
    return (await this.getChunks(scope, [chunkId]))[0] ?? null;
  }

  async getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]> {
    const byId = new Map<string, ChunkRecord>();
    for (const batch of batches(chunkIds)) {
      const rows = await this.sql.rows(
        `SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id IN (${marks(batch)})`,
        [scope.tenantId, scope.kbId, ...batch],
      );
      for (const row of rows) byId.set(String(row.id), toChunk(row));
    }
    return chunkIds.map((id) => byId.get(id)).filter((c): c is ChunkRecord => c !== undefined);
  }

  async listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]> {
    const rows = await this.sql.rows(
      `SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? ORDER BY ordinal`,
      [scope.tenantId, scope.kbId, documentId, version],
    );
    return rows.map(toChunk);
  }

  async setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error: string | null = null): Promise<void> {
    await this.sql.exec(
      'UPDATE chunks SET status = ?, error = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?',
      [status, error, scope.tenantId, scope.kbId, chunkId],
    );
  }

  async searchChunksByVector(scope: KbScope, vector: Float32Array, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    const documents = filter?.documentIds?.length ? new Set(filter.documentIds) : undefined;
    return this.withChunks(scope, await this.engine.vectors.nearest(this.sql, chunkCandidates(scope), vector, k, documents));
  }

  async searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    return this.withChunks(scope, await this.engine.fullText.search(this.sql, scope, query, k, filter));
  }

  private async withChunks(scope: KbScope, scored: Array<{ item: string; score: number }>): Promise<ScoredChunk[]> {
    const chunks = new Map((await this.getChunks(scope, scored.map((s) => s.item))).map((c) => [c.id, c]));
    return scored.flatMap((s) => {
      const chunk = chunks.get(s.item);
      return chunk ? [{ chunk, score: s.score }] : [];
    });
  }

  // --- extraction cache ------------------------------------------------------------------

  async getCachedExtraction(key: string): Promise<ExtractionResult | null> {
    const [row] = await this.sql.rows('SELECT result FROM extraction_cache WHERE cache_key = ?', [key]);
    return row ? readJson<ExtractionResult>(row.result) : null;
  }

  async putCachedExtraction(key: string, result: ExtractionResult): Promise<void> {
    await this.sql.exec(
      'INSERT INTO extraction_cache (cache_key, result, created_at) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE result = VALUES(result)',
      [key, JSON.stringify(result), toSqlTime(new Date().toISOString())],
    );
  }

  // --- LLM usage and budget --------------------------------------------------------------

  addLlmUsage(scope: KbScope, documentId: string, version: number, usage: LlmUsage): Promise<void> {
    return this.llm.addUsage(scope, documentId, version, usage);
  }

  getDocumentLlmUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage> {
    return this.llm.documentUsage(scope, documentId, version);
  }

  getKnowledgeBaseLlmUsage(scope: KbScope): Promise<LlmUsage> {
    return this.llm.knowledgeBaseUsage(scope);
  }

  takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force = false): Promise<number> {
    return this.llm.takeFromBucket(key, amount, perMinute, nowMs, force);
  }

  acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean> {
    return this.llm.acquireLease(key, holder, slots, expiresAtMs, nowMs);
  }

  releaseLease(key: string, holder: string): Promise<void> {
    return this.llm.releaseLease(key, holder);
  }

  // --- graph -----------------------------------------------------------------------------

  async applyChunkExtraction(
    scope: KbScope,
    chunkId: string,
    entities: readonly EntityMentionWrite[],
    relationships: readonly RelationshipMentionWrite[],
  ): Promise<void> {
    await this.sql.transaction((tx) => writeChunkExtraction(tx, this.dialect, scope, chunkId, entities, relationships));
  }

  getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
    return this.graph.getEntities(scope, ids);
  }

  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    return summaries.listEntityCandidates(this.sql, this.dialect, scope, normalizedNames);
  }

  entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>> {
    return this.graph.entityMentionsOfSameContent(scope, chunkId);
  }

  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]> {
    return summaries.listPendingSummaries(this.sql, scope, limit);
  }

  listScopesWithPendingSummaries(): Promise<KbScope[]> {
    return summaries.listScopesWithPendingSummaries(this.sql);
  }

  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
    return summaries.saveSummaries(this.sql, this.dialect, scope, updates);
  }

  findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]> {
    return this.graph.findEntitiesByNormalizedName(scope, normalizedName);
  }

  searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]> {
    return this.graph.searchEntitiesByName(scope, query, limit);
  }

  searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]> {
    return this.graph.searchEntitiesByVector(scope, vector, k);
  }

  searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]> {
    return this.graph.searchRelationshipsByVector(scope, vector, k);
  }

  relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>> {
    return this.graph.relationshipSimilarities(scope, vector, relationshipIds);
  }

  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]> {
    return this.graph.relationshipsOfEntities(scope, entityIds);
  }

  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.graph.chunkIdsForRelationships(scope, relationshipIds);
  }

  chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.graph.chunkIdsForEntities(scope, entityIds);
  }

  exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
    return this.graph.exportGraph(scope);
  }

  // --- graph edits -----------------------------------------------------------------------

  async updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.updateEntity(entityId, patch, edit));
    return (await this.graph.getEntities(scope, [entityId]))[0]!;
  }

  async updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord> {
    await this.editGraph(scope, (edits) => edits.updateRelationship(relationshipId, patch, edit));
    return (await this.graph.getRelationships(scope, [relationshipId]))[0]!;
  }

  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteEntity(entityId, edit));
  }

  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteRelationship(relationshipId, edit));
  }

  async createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.createManualEntity(entity, links, edit));
    return (await this.graph.getEntities(scope, [entity.id]))[0]!;
  }

  async mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.mergeEntities(sourceId, targetId, edit));
    return (await this.graph.getEntities(scope, [targetId]))[0]!;
  }

  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord> {
    return this.editGraph(scope, (edits) => edits.undo(editId, edit));
  }

  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, this.dialect, scope)).get(editId);
  }

  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, this.dialect, scope)).list(limit);
  }

  private editGraph<T>(scope: KbScope, edit: (edits: SqlGraphEdits) => Promise<T>): Promise<T> {
    return this.sql.transaction((tx) => edit(new SqlGraphEdits(new GraphEditSession(tx, this.dialect, scope))));
  }

  // --- chat history ----------------------------------------------------------------------

  recordStage(scope: KbScope, event: StageEvent): Promise<void> {
    return recordStage(this.sql, scope, event);
  }

  listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]> {
    return listStages(this.sql, scope, documentId, version);
  }

  async saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void> {
    const at = toSqlTime(new Date().toISOString());
    const insert = 'INSERT INTO chat_messages (tenant_id, kb_id, chat_id, role, content, citations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)';
    await this.sql.transaction(async (tx) => {
      await tx.exec(insert, [scope.tenantId, scope.kbId, turn.chatId, 'user', turn.question, '[]', at]);
      await tx.exec(insert, [scope.tenantId, scope.kbId, turn.chatId, 'assistant', turn.answer, JSON.stringify(turn.citations), at]);
    });
  }

  async ping(): Promise<void> {
    await this.sql.rows('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
