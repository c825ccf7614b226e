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
import { BlobVectorCache } from './blob-vector-cache';
import { listStages, recordStage } from './document-stages';
import { currentChunkCandidates, graphCandidates, rankByVector } from './vector-search';
import { searchChunkTexts } from './fulltext-index';
import { prepareChunks, writeChunks } from './chunk-writes';
import { sourceHash, upsertDocumentRow, writeDocumentText } from './document-writes';
import { refreshDerived, removeDocumentChunks, writeChunkExtraction } from './graph-writes';
import { applyOverrides } from './graph-overlay-sql';
import * as graph from './graph-reads';
import * as summaries from '../sql/summary-sql';
import { SqlGraphEdits } from '../sql/graph-edits-sql';
import { GraphEditSession } from '../sql/graph-edit-session';
import type { GraphWritePath } from '../sql/graph-edit-session';
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
  /** Blob path only: per-process vector matrices, checked against the database before use. */
  private readonly blobVectors = new BlobVectorCache();
  private readonly llm: SqlLlmBudget;
  private readonly dialect: SqlDialect;

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
      await removeDocumentChunks(tx, scope, documentId);
      for (const table of ['document_texts', 'document_stages']) {
        await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ?`, [scope.tenantId, scope.kbId, documentId]);
      }
      return (await tx.exec('DELETE FROM documents WHERE tenant_id = ? AND kb_id = ? AND id = ?', [scope.tenantId, scope.kbId, documentId])) > 0;
    });
  }

  async deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number> {
    return this.sql.transaction(async (tx) => {
      const removed = await removeDocumentChunks(tx, scope, documentId, currentVersion);
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
    if (this.vectors.scoresInDatabase) {
      return this.withChunks(scope, await rankByVector(this.sql, this.vectors, currentChunkCandidates(scope, filter), vector, k));
    }
    const index = await this.blobVectors.index(this.sql, 'chunks', scope, currentChunkCandidates(scope), 'c.document_id');
    const documents = filter?.documentIds?.length ? new Set(filter.documentIds) : undefined;
    return this.withChunks(scope, index.search(vector, k, documents));
  }

  async searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    return this.withChunks(scope, await searchChunkTexts(this.sql, scope, query, k, filter));
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
    await this.sql.transaction((tx) => writeChunkExtraction(tx, this.vectors, scope, chunkId, entities, relationships));
  }

  getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
    return graph.getEntities(this.sql, scope, ids);
  }

  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    return summaries.listEntityCandidates(this.sql, this.dialect, scope, normalizedNames);
  }

  async entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>> {
    const rows = await this.sql.rows(
      `SELECT DISTINCT m.name, m.entity_id FROM chunks c
       JOIN chunks o ON o.tenant_id = c.tenant_id AND o.kb_id = c.kb_id AND o.content_hash = c.content_hash AND o.id <> c.id
       JOIN entity_mentions m ON m.tenant_id = o.tenant_id AND m.kb_id = o.kb_id AND m.chunk_id = o.id
       WHERE c.tenant_id = ? AND c.kb_id = ? AND c.id = ? ORDER BY m.entity_id, m.name`,
      [scope.tenantId, scope.kbId, chunkId],
    );
    return rows.map((r) => ({ name: String(r.name), entityId: String(r.entity_id) }));
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
    return graph.findEntitiesByNormalizedName(this.sql, scope, normalizedName);
  }

  searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]> {
    return graph.searchEntitiesByName(this.sql, scope, query, limit);
  }

  async searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]> {
    const top = await this.rankGraph('entities', scope, vector, k);
    const entities = new Map((await graph.getEntities(this.sql, scope, top.map((t) => t.item))).map((e) => [e.id, e]));
    return top.flatMap((t) => {
      const entity = entities.get(t.item);
      return entity ? [{ entity, score: t.score }] : [];
    });
  }

  /** Relationships a user weighted negative are left out: they are kept out of retrieval. */
  async searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]> {
    const candidates = graphCandidates('relationships', scope);
    const retrievable = { ...candidates, where: `${candidates.where} AND r.weight >= 0` };
    const top = this.vectors.scoresInDatabase
      ? await rankByVector(this.sql, this.vectors, retrievable, vector, k)
      : (await this.blobVectors.index(this.sql, 'retrievable-relationships', scope, retrievable)).search(vector, k);
    const relationships = new Map((await graph.getRelationships(this.sql, scope, top.map((t) => t.item))).map((r) => [r.id, r]));
    return top.flatMap((t) => {
      const relationship = relationships.get(t.item);
      return relationship ? [{ relationship, score: t.score }] : [];
    });
  }

  /** Ranks a graph table: by the server on TiDB, from the process's cached matrix on the blob path. */
  private async rankGraph(table: 'entities' | 'relationships', scope: KbScope, vector: Float32Array, k: number): Promise<Array<{ item: string; score: number }>> {
    if (this.vectors.scoresInDatabase) return rankByVector(this.sql, this.vectors, graphCandidates(table, scope), vector, k);
    return (await this.blobVectors.index(this.sql, table, scope, graphCandidates(table, scope))).search(vector, k);
  }

  async relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>> {
    if (!this.vectors.scoresInDatabase) {
      return (await this.blobVectors.index(this.sql, 'relationships', scope, graphCandidates('relationships', scope))).similarities(vector, relationshipIds);
    }
    const result = new Map<string, number>();
    for (const batch of batches([...new Set(relationshipIds)])) {
      const candidates = graphCandidates('relationships', scope, batch);
      for (const { item, score } of await rankByVector(this.sql, this.vectors, candidates, vector, batch.length)) result.set(item, score);
    }
    return result;
  }

  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]> {
    return graph.relationshipsOfEntities(this.sql, scope, entityIds);
  }

  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>> {
    return graph.chunkIdsByOwner(this.sql, scope, 'relationship_mentions', 'relationship_id', relationshipIds);
  }

  chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>> {
    return graph.chunkIdsByOwner(this.sql, scope, 'entity_mentions', 'entity_id', entityIds);
  }

  exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
    return graph.exportGraph(this.sql, scope);
  }

  // --- graph edits -----------------------------------------------------------------------

  async updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.updateEntity(entityId, patch, edit));
    return (await graph.getEntities(this.sql, scope, [entityId]))[0]!;
  }

  async updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord> {
    await this.editGraph(scope, (edits) => edits.updateRelationship(relationshipId, patch, edit));
    return (await graph.getRelationships(this.sql, scope, [relationshipId]))[0]!;
  }

  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteEntity(entityId, edit));
  }

  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteRelationship(relationshipId, edit));
  }

  async createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.createManualEntity(entity, links, edit));
    return (await graph.getEntities(this.sql, scope, [entity.id]))[0]!;
  }

  async mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.mergeEntities(sourceId, targetId, edit));
    return (await graph.getEntities(this.sql, scope, [targetId]))[0]!;
  }

  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord> {
    return this.editGraph(scope, (edits) => edits.undo(editId, edit));
  }

  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, this.dialect, scope, this.writePath)).get(editId);
  }

  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, this.dialect, scope, this.writePath)).list(limit);
  }

  private editGraph<T>(scope: KbScope, edit: (edits: SqlGraphEdits) => Promise<T>): Promise<T> {
    return this.sql.transaction((tx) => edit(new SqlGraphEdits(new GraphEditSession(tx, this.dialect, scope, this.writePath))));
  }

  private readonly writePath: GraphWritePath = {
    writeChunk: (tx, scope, chunkId, entities, relationships, replay) => writeChunkExtraction(tx, this.vectors, scope, chunkId, entities, relationships, replay),
    refreshDerived,
    applyOverrides,
  };

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
