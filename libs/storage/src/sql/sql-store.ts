import type { IndexStatus, KbScope, OutboxEvent, TenantScope } from '@trellis/contracts';
import type { CommunityChangeLog, CommunityChanges, CommunityRecord } from '@trellis/graph';
import type { EntityMentionWrite, EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, PendingSummary, RelationshipMentionWrite, RelationshipPatch, SummaryUpdate } from '@trellis/graph';
import type {
  ChatEngineRecord,
  ChatEngineSettings,
  ChatMessageRecord,
  ChatRecord,
  ChatTurn,
  ChunkFilter,
  ChunkRecord,
  DocumentRecord,
  EntityCandidate,
  EntityRecord,
  ExtractionResult,
  KbSettings,
  KnowledgeBaseRecord,
  LlmPurpose,
  LlmSpend,
  LlmUsage,
  NewChunk,
  PausedChunk,
  NewDocumentVersion,
  RelationshipRecord,
  ScoredChunk,
  ScoredEntity,
  ScoredRelationship,
  StageEvent,
  StageRecord,
} from '../records';
import type { TrellisStore } from '../trellis-store';
import type { CachedExtraction } from '../repositories/extraction-cache.repository';
import type { StuckChunk, StuckDocument } from '../repositories/stuck-work';
import type { DocumentPage, DocumentProgress, DocumentVersionRef } from '../repositories/document.repository';
import type { CommunityState } from '../repositories/community.repository';
import type { StoredOutboxEvent } from '../repositories/outbox.repository';
import type { ChatPage } from '../repositories/chat.repository';
import { SqlChats } from './chat-sql';
import { SqlChatEngines } from './chat-engine-sql';
import { SqlCommunities } from './community-sql';
import { SqlChunks } from './chunk-sql';
import { SqlDocuments } from './document-sql';
import { SqlGraphChanges } from './graph-changes-sql';
import { SqlGraphReads } from './graph-read-sql';
import { SqlKnowledgeBases } from './knowledge-base-sql';
import { SqlLlmBudget } from './llm-budget-sql';
import { SqlLlmSpend } from './llm-spend-sql';
import { SqlExtractionCache } from './extraction-cache-sql';
import { SqlStuckWork } from './stuck-work-sql';
import { SqlOutbox } from './outbox-sql';
import type { SqlEngine } from './sql-engine';
import type { SqlDatabase } from './sql-session';

/**
 * The storage API written once over the SQL session port: both adapters (SqliteStore,
 * MysqlStore) are this class over their engine's session, dialect, full text and vector
 * ranking, and differ only in how they connect and migrate.
 */
export abstract class SqlStore implements TrellisStore {
  private readonly knowledgeBases: SqlKnowledgeBases;
  private readonly documents: SqlDocuments;
  private readonly chunks: SqlChunks;
  private readonly llm: SqlLlmBudget;
  private readonly spend: SqlLlmSpend;
  private readonly extractions: SqlExtractionCache;
  private readonly graph: SqlGraphReads;
  private readonly changes: SqlGraphChanges;
  private readonly stuck: SqlStuckWork;
  private readonly communities: SqlCommunities;
  private readonly chats: SqlChats;
  private readonly chatEngines: SqlChatEngines;
  private readonly outbox: SqlOutbox;

  protected constructor(
    protected readonly sql: SqlDatabase,
    protected readonly engine: SqlEngine,
  ) {
    this.knowledgeBases = new SqlKnowledgeBases(sql, engine);
    this.documents = new SqlDocuments(sql, engine);
    this.chunks = new SqlChunks(sql, engine);
    this.spend = new SqlLlmSpend(sql, engine.dialect);
    this.llm = new SqlLlmBudget(sql, engine.dialect, this.spend);
    this.extractions = new SqlExtractionCache(sql, engine.dialect);
    this.graph = new SqlGraphReads(sql, engine);
    this.changes = new SqlGraphChanges(sql, engine, this.graph);
    this.stuck = new SqlStuckWork(sql, engine);
    this.communities = new SqlCommunities(sql, engine.dialect);
    this.chats = new SqlChats(sql, engine.dialect);
    this.chatEngines = new SqlChatEngines(sql, engine.dialect);
    this.outbox = new SqlOutbox(sql, engine.dialect);
  }

  abstract close(): Promise<void>;

  async ping(): Promise<void> {
    await this.sql.rows('SELECT 1');
  }

  // --- knowledge bases -------------------------------------------------------------------

  createKnowledgeBase(scope: TenantScope, input: { name: string; description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord> {
    return this.knowledgeBases.createKnowledgeBase(scope, input);
  }
  listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]> {
    return this.knowledgeBases.listKnowledgeBases(scope);
  }
  findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null> {
    return this.knowledgeBases.findKnowledgeBase(scope, idOrName);
  }
  updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null> {
    return this.knowledgeBases.updateKnowledgeBase(scope, changes);
  }
  deleteKnowledgeBase(scope: KbScope): Promise<boolean> {
    return this.knowledgeBases.deleteKnowledgeBase(scope);
  }
  countDocuments(scope: KbScope): Promise<number> {
    return this.knowledgeBases.countDocuments(scope);
  }

  // --- documents and their pipeline stages -----------------------------------------------

  findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null> {
    return this.documents.findDocumentBySource(scope, sourceUri);
  }
  saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion, announce?: readonly OutboxEvent[]): Promise<DocumentRecord> {
    return this.documents.saveDocumentVersion(scope, doc, announce);
  }
  saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord> {
    return this.documents.saveFailedDocument(scope, doc, error);
  }
  getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null> {
    return this.documents.getDocument(scope, documentId);
  }
  listDocuments(scope: KbScope, page?: DocumentPage): Promise<DocumentRecord[]> {
    return this.documents.listDocuments(scope, page);
  }
  getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null> {
    return this.documents.getDocumentText(scope, documentId, version);
  }
  setDocumentStatus(scope: KbScope, documentId: string, version: number, status: IndexStatus, error: string | null = null, announce?: readonly OutboxEvent[]): Promise<void> {
    return this.documents.setDocumentStatus(scope, documentId, version, status, error, announce);
  }
  countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>> {
    return this.documents.countChunksByStatus(scope, documentId);
  }
  deleteDocument(scope: KbScope, documentId: string): Promise<boolean> {
    return this.documents.deleteDocument(scope, documentId);
  }
  deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number> {
    return this.documents.deleteStaleVersions(scope, documentId, currentVersion);
  }
  listUnfinishedDocuments(): Promise<Array<KbScope & { documentId: string; version: number; status: IndexStatus }>> {
    return this.documents.listUnfinishedDocuments();
  }
  listStuckDocuments(before: string, limit: number): Promise<StuckDocument[]> {
    return this.stuck.listStuckDocuments(before, limit);
  }
  listStuckChunks(before: string, limit: number): Promise<StuckChunk[]> {
    return this.stuck.listStuckChunks(before, limit);
  }
  recordRedrive(scope: KbScope, documentId: string, version: number, chunkIds: readonly string[]): Promise<number | null> {
    return this.stuck.recordRedrive(scope, documentId, version, chunkIds);
  }
  recordStage(scope: KbScope, event: StageEvent): Promise<void> {
    return this.documents.recordStage(scope, event);
  }
  listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]> {
    return this.documents.listStages(scope, documentId, version);
  }
  listProgress(scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, DocumentProgress>> {
    return this.documents.listProgress(scope, versions);
  }

  // --- chunks ----------------------------------------------------------------------------

  upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void> {
    return this.chunks.upsertChunks(scope, chunks);
  }
  getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null> {
    return this.chunks.getChunk(scope, chunkId);
  }
  getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]> {
    return this.chunks.getChunks(scope, chunkIds);
  }
  listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]> {
    return this.chunks.listChunks(scope, documentId, version);
  }
  setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error: string | null = null, announce?: readonly OutboxEvent[]): Promise<void> {
    return this.chunks.setChunkStatus(scope, chunkId, status, error, announce);
  }
  markChunkGraphed(scope: KbScope, chunkId: string): Promise<number | null> {
    return this.chunks.markChunkGraphed(scope, chunkId);
  }
  searchChunksByVector(scope: KbScope, vector: Float32Array, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    return this.chunks.searchChunksByVector(scope, vector, k, filter);
  }
  searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]> {
    return this.chunks.searchChunksFullText(scope, query, k, filter);
  }

  // --- extraction cache, chat history and chat engines----------------------------------------------

  getCachedExtraction(scope: KbScope, key: string): Promise<CachedExtraction | null> {
    return this.extractions.get(scope, key);
  }
  putCachedExtraction(scope: KbScope, key: string, result: ExtractionResult): Promise<void> {
    return this.extractions.put(scope, key, result);
  }

  saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void> {
    return this.chats.saveChatTurn(scope, turn);
  }
  getChat(scope: TenantScope, chatId: string): Promise<ChatRecord | null> {
    return this.chats.getChat(scope, chatId);
  }
  listChats(scope: TenantScope, page: ChatPage): Promise<ChatRecord[]> {
    return this.chats.listChats(scope, page);
  }
  listChatMessages(scope: TenantScope, chatId: string, last?: number): Promise<ChatMessageRecord[]> {
    return this.chats.listChatMessages(scope, chatId, last);
  }
  deleteChat(scope: TenantScope, chatId: string): Promise<boolean> {
    return this.chats.deleteChat(scope, chatId);
  }
  createChatEngine(scope: TenantScope, engine: { name: string; description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord> {
    return this.chatEngines.createChatEngine(scope, engine);
  }
  getChatEngine(scope: TenantScope, name: string): Promise<ChatEngineRecord | null> {
    return this.chatEngines.getChatEngine(scope, name);
  }
  listChatEngines(scope: TenantScope): Promise<ChatEngineRecord[]> {
    return this.chatEngines.listChatEngines(scope);
  }
  updateChatEngine(scope: TenantScope, name: string, changes: { description: string; settings: ChatEngineSettings }): Promise<ChatEngineRecord | null> {
    return this.chatEngines.updateChatEngine(scope, name, changes);
  }
  deleteChatEngine(scope: TenantScope, name: string): Promise<boolean> {
    return this.chatEngines.deleteChatEngine(scope, name);
  }

  // --- LLM usage and budget --------------------------------------------------------------

  addLlmUsage(scope: KbScope, documentId: string, version: number, usage: LlmUsage & { countedInputTokens?: number }, purpose: LlmPurpose, at = new Date()): Promise<void> {
    return this.llm.addUsage(scope, documentId, version, usage, purpose, at);
  }
  getLlmSpend(scope: KbScope, fromDay: string): Promise<Record<LlmPurpose, LlmSpend>> {
    return this.spend.since(scope, fromDay);
  }
  pauseChunk(scope: KbScope, chunk: Omit<PausedChunk, 'pausedAt'>, at = new Date()): Promise<void> {
    return this.spend.pause(scope, chunk, at);
  }
  listPausedChunks(scope: KbScope, limit: number): Promise<PausedChunk[]> {
    return this.spend.paused(scope, limit);
  }
  countPausedChunks(scope: KbScope): Promise<number> {
    return this.spend.countPaused(scope);
  }
  listScopesWithPausedChunks(): Promise<KbScope[]> {
    return this.spend.scopesWithPaused();
  }
  unpauseChunks(scope: KbScope, chunkIds: readonly string[], announce: readonly OutboxEvent[] = []): Promise<number> {
    return this.spend.unpause(scope, chunkIds, announce);
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

  // --- graph reads -----------------------------------------------------------------------

  getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]> {
    return this.graph.getEntities(scope, ids);
  }
  findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]> {
    return this.graph.findEntitiesByNormalizedName(scope, normalizedName);
  }
  entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>> {
    return this.graph.entityMentionsOfSameContent(scope, chunkId);
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

  entityIdsForChunks(scope: KbScope, chunkIds: readonly string[]): Promise<Map<string, string[]>> {
    return this.graph.entityIdsForChunks(scope, chunkIds);
  }
  exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }> {
    return this.graph.exportGraph(scope);
  }

  // --- graph changes: extractions, summaries, manual edits -------------------------------

  applyChunkExtraction(scope: KbScope, chunkId: string, entities: readonly EntityMentionWrite[], relationships: readonly RelationshipMentionWrite[]): Promise<void> {
    return this.changes.applyChunkExtraction(scope, chunkId, entities, relationships);
  }
  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
    return this.changes.listEntityCandidates(scope, normalizedNames);
  }
  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]> {
    return this.changes.listPendingSummaries(scope, limit);
  }
  listScopesWithPendingSummaries(): Promise<KbScope[]> {
    return this.changes.listScopesWithPendingSummaries();
  }
  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
    return this.changes.saveSummaries(scope, updates);
  }
  updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord> {
    return this.changes.updateEntity(scope, entityId, patch, edit);
  }
  updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord> {
    return this.changes.updateRelationship(scope, relationshipId, patch, edit);
  }
  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void> {
    return this.changes.deleteEntity(scope, entityId, edit);
  }
  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void> {
    return this.changes.deleteRelationship(scope, relationshipId, edit);
  }
  createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord> {
    return this.changes.createManualEntity(scope, entity, links, edit);
  }
  mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord> {
    return this.changes.mergeEntities(scope, sourceId, targetId, edit);
  }
  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord> {
    return this.changes.undoGraphEdit(scope, editId, edit);
  }
  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null> {
    return this.changes.getGraphEdit(scope, editId);
  }
  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]> {
    return this.changes.listGraphEdits(scope, limit);
  }

  // --- communities -----------------------------------------------------------------------

  listCommunities(scope: KbScope): Promise<CommunityRecord[]> {
    return this.communities.listCommunities(scope);
  }
  getCommunity(scope: KbScope, communityId: string): Promise<CommunityRecord | null> {
    return this.communities.getCommunity(scope, communityId);
  }
  listCommunitiesOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<CommunityRecord[]> {
    return this.communities.listCommunitiesOfEntities(scope, entityIds);
  }
  listAssignedEntities(scope: KbScope, entityIds: readonly string[]): Promise<string[]> {
    return this.communities.listAssignedEntities(scope, entityIds);
  }
  countCommunities(scope: KbScope): Promise<{ communities: number; levels: number }> {
    return this.communities.countCommunities(scope);
  }
  countUnassignedEntities(scope: KbScope): Promise<number> {
    return this.communities.countUnassignedEntities(scope);
  }
  listCommunityChanges(scope: KbScope): Promise<CommunityChangeLog> {
    return this.communities.listCommunityChanges(scope);
  }
  saveCommunities(scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void> {
    return this.communities.saveCommunities(scope, changes, refreshedAt);
  }
  markCommunitiesChanged(scope: KbScope, at: string): Promise<void> {
    return this.communities.markCommunitiesChanged(scope, at);
  }
  listCommunityRefreshesDue(quietSince: string): Promise<KbScope[]> {
    return this.communities.listCommunityRefreshesDue(quietSince);
  }
  getCommunityState(scope: KbScope): Promise<CommunityState> {
    return this.communities.getCommunityState(scope);
  }

  // --- the transactional outbox ----------------------------------------------------------

  appendOutboxEvents(events: readonly OutboxEvent[]): Promise<void> {
    return this.outbox.appendOutboxEvents(events);
  }
  listOutboxEvents(before: string, limit: number): Promise<StoredOutboxEvent[]> {
    return this.outbox.listOutboxEvents(before, limit);
  }
  deleteOutboxEvents(ids: readonly string[]): Promise<number> {
    return this.outbox.deleteOutboxEvents(ids);
  }
  countOutboxEvents(before?: string): Promise<number> {
    return this.outbox.countOutboxEvents(before);
  }
}
