import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
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
import { vectorToBuffer } from '../vector-math';
import * as summaries from '../sql/summary-sql';
import { SQLITE_MIGRATIONS } from './sqlite-schema';
import { SqlLlmBudget } from '../sql/llm-budget-sql';
import { SqliteDatabase } from './sqlite-database';
import { sqliteDialect } from './sqlite-dialect';
import { SqlGraphEdits } from '../sql/graph-edits-sql';
import { GRAPH_EDIT_TABLES, GraphEditSession } from '../sql/graph-edit-session';
import { removeDocumentChunks, writeChunkExtraction } from '../sql/graph-write-sql';
import { SqlGraphReads } from '../sql/graph-read-sql';
import { InProcessMatrices, chunkCandidates } from '../sql/vector-ranking';
import type { SqlEngine } from '../sql/sql-engine';
import { fts5Index } from './fts5-index';
import { CHUNK_COLUMNS, inBatches, marks } from './sqlite-rows';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from '../graph-edit-records';
import { byPipelineOrder, toChunk, toDocument, toKnowledgeBase as toKb, toStage } from '../row-mappers';
import type { Row } from '../row-mappers';

/**
 * The standalone store: one SQLite file (better-sqlite3, WAL mode). Vector search is an
 * exact scan, which is fast enough for the corpus sizes one machine indexes; full text uses
 * FTS5 with BM25 ranking.
 */
export class SqliteStore implements TrellisStore {
  private readonly db: Database.Database;
  /** The connection behind the async session port the shared SQL is written against. */
  private readonly sql: SqliteDatabase;
  private readonly llm: SqlLlmBudget;
  /** Exact vector search over in-memory matrices, dropped after writes (see `changed` calls); FTS5 full text. */
  private readonly engine: SqlEngine = { dialect: sqliteDialect, fullText: fts5Index, vectors: new InProcessMatrices() };
  /** Entity and relationship lookups and searches. */
  private readonly reads: SqlGraphReads;

  /** `path` is a file path, or ':memory:' for tests. */
  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = OFF');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
    this.sql = new SqliteDatabase(this.db);
    this.llm = new SqlLlmBudget(this.sql, sqliteDialect);
    serializeSynchronousMethods(this, this.sql);
    this.reads = new SqlGraphReads(this.sql, this.engine);
  }

  private migrate(): void {
    this.db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)');
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version),
    );
    for (const migration of SQLITE_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      this.db.transaction(() => {
        this.db.exec(migration.sql);
        this.db
          .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(migration.version, migration.name, now());
      })();
    }
  }

  // --- knowledge bases -------------------------------------------------------------------

  async createKnowledgeBase(
    scope: TenantScope,
    input: { name: string; description: string; settings: KbSettings },
  ): Promise<KnowledgeBaseRecord> {
    const id = stableId('kb', scope.tenantId, input.name);
    const createdAt = now();
    try {
      this.db
        .prepare('INSERT INTO knowledge_bases (id, tenant_id, name, description, settings, created_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(id, scope.tenantId, input.name, input.description, JSON.stringify(input.settings), createdAt);
    } catch (error) {
      if ((error as { code?: string }).code?.startsWith('SQLITE_CONSTRAINT')) {
        throw new TrellisError(ErrorCode.AlreadyExists, `knowledge base "${input.name}" already exists`);
      }
      throw error;
    }
    return { id, tenantId: scope.tenantId, name: input.name, description: input.description, settings: input.settings, createdAt };
  }

  async listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]> {
    return (this.db.prepare('SELECT * FROM knowledge_bases WHERE tenant_id = ? ORDER BY name').all(scope.tenantId) as Row[]).map(toKb);
  }

  async findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null> {
    const row = this.db
      .prepare('SELECT * FROM knowledge_bases WHERE tenant_id = ? AND (id = ? OR name = ?)')
      .get(scope.tenantId, idOrName, idOrName) as Row | undefined;
    return row ? toKb(row) : null;
  }

  async updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null> {
    this.db
      .prepare('UPDATE knowledge_bases SET description = ?, settings = ? WHERE tenant_id = ? AND id = ?')
      .run(changes.description, JSON.stringify(changes.settings), scope.tenantId, scope.kbId);
    return this.findKnowledgeBase(scope, scope.kbId);
  }

  async deleteKnowledgeBase(scope: KbScope): Promise<boolean> {
    return this.db.transaction(() => {
      const chunkIds = this.db.prepare('SELECT id FROM chunks WHERE tenant_id = ? AND kb_id = ?').pluck().all(scope.tenantId, scope.kbId) as string[];
      this.deleteFts(chunkIds);
      for (const table of ['entity_mentions', 'relationship_mentions', 'relationships', 'entities', 'chunks', 'document_versions', 'document_stages', 'documents', 'chat_messages', 'llm_usage', ...GRAPH_EDIT_TABLES]) {
        this.db.prepare(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ?`).run(scope.tenantId, scope.kbId);
      }
      this.engine.vectors.changed(scope.kbId, 'chunks', 'entities', 'relationships');
      const result = this.db.prepare('DELETE FROM knowledge_bases WHERE tenant_id = ? AND id = ?').run(scope.tenantId, scope.kbId);
      return result.changes > 0;
    })();
  }

  async countDocuments(scope: KbScope): Promise<number> {
    return this.db.prepare('SELECT COUNT(*) FROM documents WHERE tenant_id = ? AND kb_id = ?').pluck().get(scope.tenantId, scope.kbId) as number;
  }

  // --- documents -------------------------------------------------------------------------

  async findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null> {
    const row = this.db
      .prepare('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? AND source_uri = ?')
      .get(scope.tenantId, scope.kbId, sourceUri) as Row | undefined;
    return row ? toDocument(row) : null;
  }

  async saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion): Promise<DocumentRecord> {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO document_versions (document_id, version, tenant_id, kb_id, text) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (document_id, version) DO UPDATE SET text = excluded.text`,
        )
        .run(doc.id, doc.version, scope.tenantId, scope.kbId, doc.text);
      this.upsertDocumentRow(scope, doc, 'pending', null);
      this.engine.vectors.changed(scope.kbId, 'chunks');
    })();
    return (await this.getDocument(scope, doc.id))!;
  }

  async saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord> {
    this.upsertDocumentRow(scope, doc, 'failed', error);
    this.engine.vectors.changed(scope.kbId, 'chunks');
    return (await this.getDocument(scope, doc.id))!;
  }

  private upsertDocumentRow(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, status: IndexStatus, error: string | null): void {
    const at = now();
    this.db
      .prepare(
        `INSERT INTO documents (id, tenant_id, kb_id, source_uri, filename, mime_type, content_hash, version, status, error, size_bytes, metadata, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET filename = excluded.filename, mime_type = excluded.mime_type,
           content_hash = excluded.content_hash, version = excluded.version, status = excluded.status,
           error = excluded.error, size_bytes = excluded.size_bytes, metadata = excluded.metadata, updated_at = excluded.updated_at`,
      )
      .run(doc.id, scope.tenantId, scope.kbId, doc.sourceUri, doc.filename, doc.mimeType, doc.contentHash, doc.version, status, error,
        doc.sizeBytes, JSON.stringify(doc.metadata), at, at);
  }

  async getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null> {
    const row = this.db
      .prepare('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? AND id = ?')
      .get(scope.tenantId, scope.kbId, documentId) as Row | undefined;
    return row ? toDocument(row) : null;
  }

  async listDocuments(scope: KbScope): Promise<DocumentRecord[]> {
    return (this.db.prepare('SELECT * FROM documents WHERE tenant_id = ? AND kb_id = ? ORDER BY source_uri').all(scope.tenantId, scope.kbId) as Row[]).map(toDocument);
  }

  async getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null> {
    const text = this.db
      .prepare('SELECT text FROM document_versions WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?')
      .pluck()
      .get(scope.tenantId, scope.kbId, documentId, version) as string | undefined;
    return text ?? null;
  }

  async setDocumentStatus(scope: KbScope, documentId: string, version: number, status: IndexStatus, error: string | null = null): Promise<void> {
    this.db
      .prepare('UPDATE documents SET status = ?, error = ?, updated_at = ? WHERE tenant_id = ? AND kb_id = ? AND id = ? AND version = ?')
      .run(status, error, now(), scope.tenantId, scope.kbId, documentId, version);
  }

  async countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>> {
    const rows = this.db
      .prepare(
        `SELECT c.status AS status, COUNT(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id AND d.version = c.version
         WHERE c.tenant_id = ? AND c.kb_id = ? AND c.document_id = ? GROUP BY c.status`,
      )
      .all(scope.tenantId, scope.kbId, documentId) as Array<{ status: IndexStatus; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.status, r.n]));
  }

  async deleteDocument(scope: KbScope, documentId: string): Promise<boolean> {
    try {
      return await this.sql.transaction(async (tx) => {
        await removeDocumentChunks(tx, this.engine, scope, documentId);
        for (const table of ['document_versions', 'document_stages']) {
          await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ?`, [scope.tenantId, scope.kbId, documentId]);
        }
        return (await tx.exec('DELETE FROM documents WHERE tenant_id = ? AND kb_id = ? AND id = ?', [scope.tenantId, scope.kbId, documentId])) > 0;
      });
    } finally {
      this.engine.vectors.changed(scope.kbId, 'chunks', 'entities', 'relationships');
    }
  }

  async deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number> {
    try {
      return await this.sql.transaction(async (tx) => {
        const removed = await removeDocumentChunks(tx, this.engine, scope, documentId, currentVersion);
        for (const table of ['document_versions', 'document_stages']) {
          await tx.exec(`DELETE FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version < ?`, [scope.tenantId, scope.kbId, documentId, currentVersion]);
        }
        return removed;
      });
    } finally {
      this.engine.vectors.changed(scope.kbId, 'chunks', 'entities', 'relationships');
    }
  }

  async listUnfinishedDocuments(): Promise<Array<KbScope & { documentId: string; version: number; status: IndexStatus }>> {
    const rows = this.db
      .prepare(`SELECT tenant_id, kb_id, id, version, status FROM documents WHERE status NOT IN ('graphed', 'failed')`)
      .all() as Row[];
    return rows.map((r) => ({
      tenantId: String(r.tenant_id),
      kbId: String(r.kb_id),
      documentId: String(r.id),
      version: Number(r.version),
      status: r.status as IndexStatus,
    }));
  }

  // --- chunks ----------------------------------------------------------------------------

  async upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void> {
    const upsert = this.db.prepare(
      `INSERT INTO chunks (id, tenant_id, kb_id, document_id, version, ordinal, text, heading, token_count, content_hash, status, error, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'embedded', NULL, ?)
       ON CONFLICT (id) DO UPDATE SET text = excluded.text, heading = excluded.heading, token_count = excluded.token_count,
         content_hash = excluded.content_hash, embedding = excluded.embedding,
         status = CASE WHEN chunks.content_hash = excluded.content_hash AND chunks.status IN ('extracted', 'graphed') THEN chunks.status ELSE 'embedded' END`,
    );
    const insertFts = this.db.prepare('INSERT INTO chunk_fts (chunk_id, text) VALUES (?, ?)');
    this.engine.vectors.changed(scope.kbId, 'chunks');
    this.db.transaction(() => {
      this.deleteFts(chunks.map((c) => c.id));
      for (const c of chunks) {
        upsert.run(c.id, scope.tenantId, scope.kbId, c.documentId, c.version, c.ordinal, c.text, c.heading, c.tokenCount, c.contentHash, vectorToBuffer(c.embedding));
        insertFts.run(c.id, c.heading ? `${c.heading}\n${c.text}` : c.text);
      }
    })();
  }

  async getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null> {
    return (await this.getChunks(scope, [chunkId]))[0] ?? null;
  }

  async getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]> {
    if (chunkIds.length === 0) return [];
    const rows = inBatches(chunkIds, (batch) =>
      this.db
        .prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks WHERE +tenant_id = ? AND +kb_id = ? AND id IN (${marks(batch)})`)
        .all(scope.tenantId, scope.kbId, ...batch) as Row[],
    );
    const byId = new Map(rows.map((r) => [String(r.id), toChunk(r)]));
    return chunkIds.map((id) => byId.get(id)).filter((c): c is ChunkRecord => c !== undefined);
  }

  async listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]> {
    return (
      this.db
        .prepare(`SELECT ${CHUNK_COLUMNS} FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? ORDER BY ordinal`)
        .all(scope.tenantId, scope.kbId, documentId, version) as Row[]
    ).map(toChunk);
  }

  async setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error: string | null = null): Promise<void> {
    this.db.prepare('UPDATE chunks SET status = ?, error = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?').run(status, error, scope.tenantId, scope.kbId, chunkId);
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
    const json = this.db.prepare('SELECT result FROM extraction_cache WHERE cache_key = ?').pluck().get(key) as string | undefined;
    return json === undefined ? null : (JSON.parse(json) as ExtractionResult);
  }

  async putCachedExtraction(key: string, result: ExtractionResult): Promise<void> {
    this.db
      .prepare('INSERT INTO extraction_cache (cache_key, result, created_at) VALUES (?, ?, ?) ON CONFLICT (cache_key) DO UPDATE SET result = excluded.result')
      .run(key, JSON.stringify(result), now());
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
    try {
      await this.sql.transaction((tx) => writeChunkExtraction(tx, sqliteDialect, scope, chunkId, entities, relationships));
    } finally {
      this.engine.vectors.changed(scope.kbId, 'entities', 'relationships');
    }
  }

  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    return summaries.listEntityCandidates(this.sql, sqliteDialect, scope, normalizedNames);
  }

  entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>> {
    return this.reads.entityMentionsOfSameContent(scope, chunkId);
  }

  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]> {
    return summaries.listPendingSummaries(this.sql, scope, limit);
  }

  listScopesWithPendingSummaries(): Promise<KbScope[]> {
    return summaries.listScopesWithPendingSummaries(this.sql);
  }

  async saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
    try {
      return await summaries.saveSummaries(this.sql, sqliteDialect, scope, updates);
    } finally {
      this.engine.vectors.changed(scope.kbId, 'entities', 'relationships');
    }
  }

  async getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
    return this.reads.getEntities(scope, ids);
  }

  async findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]> {
    return this.reads.findEntitiesByNormalizedName(scope, normalizedName);
  }

  async searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]> {
    return this.reads.searchEntitiesByName(scope, query, limit);
  }

  async searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]> {
    return this.reads.searchEntitiesByVector(scope, vector, k);
  }

  async searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]> {
    return this.reads.searchRelationshipsByVector(scope, vector, k);
  }

  async relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>> {
    return this.reads.relationshipSimilarities(scope, vector, relationshipIds);
  }

  async relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]> {
    return this.reads.relationshipsOfEntities(scope, entityIds);
  }

  async chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.reads.chunkIdsForRelationships(scope, relationshipIds);
  }

  async chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.reads.chunkIdsForEntities(scope, entityIds);
  }

  async exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
    return this.reads.exportGraph(scope);
  }

  // --- graph edits -----------------------------------------------------------------------

  async updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.updateEntity(entityId, patch, edit));
    return (await this.getEntities(scope, [entityId]))[0]!;
  }

  async updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord> {
    await this.editGraph(scope, (edits) => edits.updateRelationship(relationshipId, patch, edit));
    return (await this.reads.getRelationships(scope, [relationshipId]))[0]!;
  }

  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteEntity(entityId, edit));
  }

  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void> {
    return this.editGraph(scope, (edits) => edits.deleteRelationship(relationshipId, edit));
  }

  async createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.createManualEntity(entity, links, edit));
    return (await this.getEntities(scope, [entity.id]))[0]!;
  }

  async mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord> {
    await this.editGraph(scope, (edits) => edits.mergeEntities(sourceId, targetId, edit));
    return (await this.getEntities(scope, [targetId]))[0]!;
  }

  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord> {
    return this.editGraph(scope, (edits) => edits.undo(editId, edit));
  }

  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, sqliteDialect, scope)).get(editId);
  }

  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    return new SqlGraphEdits(new GraphEditSession(this.sql, sqliteDialect, scope)).list(limit);
  }

  private async editGraph<T>(scope: KbScope, edit: (edits: SqlGraphEdits) => Promise<T>): Promise<T> {
    try {
      return await this.sql.transaction((tx) => edit(new SqlGraphEdits(new GraphEditSession(tx, sqliteDialect, scope))));
    } finally {
      this.engine.vectors.changed(scope.kbId, 'entities', 'relationships');
    }
  }

  // --- pipeline stages -------------------------------------------------------------------

  async recordStage(scope: KbScope, event: StageEvent): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO document_stages (document_id, version, stage, tenant_id, kb_id, started_at, finished_at, events, failures, last_error)
         VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
         ON CONFLICT (document_id, version, stage) DO UPDATE SET started_at = MIN(started_at, excluded.started_at),
           finished_at = MAX(finished_at, excluded.finished_at), events = events + 1, failures = failures + excluded.failures,
           last_error = COALESCE(excluded.last_error, last_error)`,
      )
      .run(event.documentId, event.version, event.stage, scope.tenantId, scope.kbId, event.startedAt, event.finishedAt, event.error ? 1 : 0, event.error ?? null);
  }

  async listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM document_stages WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?')
      .all(scope.tenantId, scope.kbId, documentId, version) as Row[];
    return rows.map(toStage).sort(byPipelineOrder);
  }

  // --- chat history ----------------------------------------------------------------------

  async saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void> {
    const insert = this.db.prepare(
      'INSERT INTO chat_messages (chat_id, tenant_id, kb_id, role, content, citations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      const at = now();
      insert.run(turn.chatId, scope.tenantId, scope.kbId, 'user', turn.question, '[]', at);
      insert.run(turn.chatId, scope.tenantId, scope.kbId, 'assistant', turn.answer, JSON.stringify(turn.citations), at);
    })();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  // --- helpers ---------------------------------------------------------------------------

  private deleteFts(chunkIds: readonly string[]): void {
    inBatches(chunkIds, (batch) => {
      this.db.prepare(`DELETE FROM chunk_fts WHERE chunk_id IN (${marks(batch)})`).run(...batch);
    });
  }

}

function now(): string {
  return new Date().toISOString();
}

/**
 * While parts of this store still call better-sqlite3 directly, those calls must not run inside a
 * transaction the async session holds open: each method of the store is run by the session when
 * no transaction is open. Methods already written over the session serialize themselves.
 */
function serializeSynchronousMethods(store: SqliteStore, sql: SqliteDatabase): void {
  const methods = store as unknown as Record<string, unknown>;
  /** Helpers called inside the store's own synchronous transactions: they stay synchronous. */
  const helpers = new Set(['constructor', 'migrate', 'upsertDocumentRow', 'deleteFts']);
  for (const name of Object.getOwnPropertyNames(SqliteStore.prototype)) {
    const method = methods[name];
    if (helpers.has(name) || typeof method !== 'function') continue;
    methods[name] = (...args: unknown[]) => sql.outside(() => (method as (...a: unknown[]) => unknown).apply(store, args));
  }
}
