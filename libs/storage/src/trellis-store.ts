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
} from './records';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, ManualEntityWrite, ManualRelationshipWrite, RelationshipPatch } from './graph-edit-records';

/**
 * The one storage API. Both adapters (SQLite for standalone, TiDB for distributed) implement
 * it and pass the same contract tests. Every method is scoped by tenant, and every write is
 * idempotent: repeating it with the same arguments leaves the same rows.
 */
export interface TrellisStore {
  // --- knowledge bases -------------------------------------------------------------------
  /** Throws ALREADY_EXISTS when the tenant has a knowledge base of that name. */
  createKnowledgeBase(
    scope: TenantScope,
    input: { name: string; description: string; settings: KbSettings },
  ): Promise<KnowledgeBaseRecord>;
  listKnowledgeBases(scope: TenantScope): Promise<KnowledgeBaseRecord[]>;
  /** By id or by name. */
  findKnowledgeBase(scope: TenantScope, idOrName: string): Promise<KnowledgeBaseRecord | null>;
  /** Replaces description and settings; null when the knowledge base does not exist. */
  updateKnowledgeBase(scope: KbScope, changes: { description: string; settings: KbSettings }): Promise<KnowledgeBaseRecord | null>;
  /** Deletes the knowledge base and every row that belongs to it. */
  deleteKnowledgeBase(scope: KbScope): Promise<boolean>;
  countDocuments(scope: KbScope): Promise<number>;

  // --- documents -------------------------------------------------------------------------
  findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null>;
  /** Stores a version and its text and makes it current, status pending. */
  saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion): Promise<DocumentRecord>;
  /** Records a document that could not be parsed, so its error shows in status. */
  saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord>;
  getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null>;
  listDocuments(scope: KbScope): Promise<DocumentRecord[]>;
  getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null>;
  /** Ignored when `version` is no longer the document's current version. */
  setDocumentStatus(
    scope: KbScope,
    documentId: string,
    version: number,
    status: IndexStatus,
    error?: string | null,
  ): Promise<void>;
  /** Chunk counts per status for the document's current version. */
  countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>>;
  /** Removes the document and everything derived only from it. */
  deleteDocument(scope: KbScope, documentId: string): Promise<boolean>;
  /** Removes chunks (and the graph facts they alone supported) of versions older than `current`. */
  deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number>;
  /** Documents whose indexing has not finished, in every tenant: what a restart re-drives. */
  listUnfinishedDocuments(): Promise<Array<KbScope & { documentId: string; version: number; status: IndexStatus }>>;

  // --- chunks ----------------------------------------------------------------------------
  /** Upserts chunks with their embeddings; status becomes embedded. */
  upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void>;
  getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null>;
  getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]>;
  listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]>;
  setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error?: string | null): Promise<void>;
  /** Nearest chunks of current document versions by cosine similarity. */
  searchChunksByVector(scope: KbScope, vector: Float32Array, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]>;
  /** BM25 ranking of current chunks for the words of `query`. */
  searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]>;

  // --- extraction cache ------------------------------------------------------------------
  getCachedExtraction(key: string): Promise<ExtractionResult | null>;
  putCachedExtraction(key: string, result: ExtractionResult): Promise<void>;

  // --- LLM usage -------------------------------------------------------------------------
  /**
   * Adds to what indexing a document version cost. Usage rows are accounting, not content:
   * they stay when the document is deleted (the money was spent) and go with the knowledge base.
   */
  addLlmUsage(scope: KbScope, documentId: string, version: number, usage: LlmUsage): Promise<void>;
  /** Usage of one document version; zeros when none was recorded. */
  getDocumentLlmUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage>;
  /** Usage summed over every document and version of the knowledge base. */
  getKnowledgeBaseLlmUsage(scope: KbScope): Promise<LlmUsage>;

  // --- shared LLM call budget ------------------------------------------------------------
  /**
   * A token bucket shared by every process on this store: it holds up to `perMinute` and
   * refills at `perMinute` per minute. Takes `amount` (capped at `perMinute`) and returns 0
   * when the bucket holds it; otherwise takes nothing and returns the milliseconds until it
   * will. With `force` it always takes, leaving a debt later callers wait for (used to charge
   * what a call cost beyond its estimate). `nowMs` is the caller's clock.
   */
  takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force?: boolean): Promise<number>;
  /**
   * A counting semaphore of `slots` slots under `key`, shared by every process: gives
   * `holder` a free slot until `expiresAtMs` and returns true, or false when every slot is
   * held by a lease that has not expired. A crashed holder's slot frees itself on expiry.
   */
  acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean>;
  releaseLease(key: string, holder: string): Promise<void>;

  // --- graph -----------------------------------------------------------------------------
  /**
   * Replaces what one chunk says about the graph: its previous mentions go, the new ones are
   * written, entities and relationships are created as needed, and the summaries of every
   * entity and relationship touched are recomputed from their remaining mentions. Entities
   * and relationships left without any mention are deleted. One transaction.
   */
  applyChunkExtraction(
    scope: KbScope,
    chunkId: string,
    entities: readonly EntityMentionWrite[],
    relationships: readonly RelationshipMentionWrite[],
  ): Promise<void>;
  getEntities(scope: KbScope, ids: readonly string[]): Promise<EntityRecord[]>;
  findEntitiesByNormalizedName(scope: KbScope, normalizedName: string): Promise<EntityRecord[]>;
  /** Entities with any of these normalised names, with their embeddings, by id: what a mention may resolve to. */
  listEntityCandidates(scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]>;
  /**
   * The entity mentions (name as written, entity id) of the other chunks with the same content
   * as this one: an earlier version of its document, or a copy in another document.
   */
  entityMentionsOfSameContent(scope: KbScope, chunkId: string): Promise<Array<{ name: string; entityId: string }>>;
  /**
   * Up to `limit` entities and up to `limit` relationships whose mentions changed since their
   * summary and embedding were computed. Until then their description is the plain
   * concatenation of what remains, so no removed text survives meanwhile.
   */
  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]>;
  /** Knowledge bases, in every tenant, with pending summaries: what a restart finishes. */
  listScopesWithPendingSummaries(): Promise<KbScope[]>;
  /** Saves summaries and embeddings; skips those whose mentions changed since (hash moved on). Resolves to the number saved. */
  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number>;
  /** Entities whose name contains the query's words, best match first. */
  searchEntitiesByName(scope: KbScope, query: string, limit: number): Promise<EntityRecord[]>;
  searchEntitiesByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredEntity[]>;
  searchRelationshipsByVector(scope: KbScope, vector: Float32Array, k: number): Promise<ScoredRelationship[]>;
  /** Cosine similarity of `vector` to each of these relationships' embeddings. */
  relationshipSimilarities(scope: KbScope, vector: Float32Array, relationshipIds: readonly string[]): Promise<Map<string, number>>;
  /** Relationships with either end in `entityIds`. */
  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<RelationshipRecord[]>;
  /** Chunk ids that mention each relationship. */
  chunkIdsForRelationships(scope: KbScope, relationshipIds: readonly string[]): Promise<Map<string, string[]>>;
  /** Chunk ids that mention each entity. */
  chunkIdsForEntities(scope: KbScope, entityIds: readonly string[]): Promise<Map<string, string[]>>;
  exportGraph(scope: KbScope): Promise<{ entities: EntityRecord[]; relationships: RelationshipRecord[] }>;

  // --- manual graph edits ----------------------------------------------------------------
  /*
   * Edits are overlays on the derived graph and survive re-indexing: overrides are re-applied
   * after every recomputation, tombstones and merges rewrite every later chunk write, manual
   * entities and relationships are never derived away. Each edit is one transaction and one
   * row of the edit log (`edit` names it). Unknown ids throw NOT_FOUND; an entity merged
   * away throws FAILED_PRECONDITION.
   */
  /** Overrides name (with its normalised form), type or description. */
  updateEntity(scope: KbScope, entityId: string, patch: EntityPatch, edit: GraphEditMeta): Promise<EntityRecord>;
  /** Overrides label, description or weight (negative: kept out of retrieval). */
  updateRelationship(scope: KbScope, relationshipId: string, patch: RelationshipPatch, edit: GraphEditMeta): Promise<RelationshipRecord>;
  /** Removes the entity with its relationships; later extractions of it are dropped. */
  deleteEntity(scope: KbScope, entityId: string, edit: GraphEditMeta): Promise<void>;
  deleteRelationship(scope: KbScope, relationshipId: string, edit: GraphEditMeta): Promise<void>;
  /** Creates an entity by hand with relationships to existing entities (a synopsis). */
  createManualEntity(scope: KbScope, entity: ManualEntityWrite, links: readonly ManualRelationshipWrite[], edit: GraphEditMeta): Promise<EntityRecord>;
  /**
   * Moves the source's mentions, relationships (duplicates combined) and provenance to the
   * target and deletes the source; later mentions of the source go to the target. Merging an
   * entity into itself, or an entity merged away, is FAILED_PRECONDITION. Resolves the target.
   */
  mergeEntities(scope: KbScope, sourceId: string, targetId: string, edit: GraphEditMeta): Promise<EntityRecord>;
  /**
   * Reverts an edit: a merge or deletion restores the rows and replays the recorded writes of
   * every affected chunk that still exists (those indexed while the edit was active too).
   * FAILED_PRECONDITION when already undone, or while a later merge or deletion touches the
   * same ids (undo that first). `edit` says who undoes and when.
   */
  undoGraphEdit(scope: KbScope, editId: string, edit: GraphEditMeta): Promise<GraphEditRecord>;
  getGraphEdit(scope: KbScope, editId: string): Promise<GraphEditRecord | null>;
  /** Newest first. */
  listGraphEdits(scope: KbScope, limit: number): Promise<GraphEditRecord[]>;

  // --- pipeline stages -------------------------------------------------------------------
  /** Adds one piece of work to its stage's aggregate (earliest start, latest finish, counts). */
  recordStage(scope: KbScope, event: StageEvent): Promise<void>;
  /** The stages of a document version, in pipeline order. */
  listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]>;

  // --- chat history ----------------------------------------------------------------------
  saveChatTurn(scope: KbScope, turn: ChatTurn): Promise<void>;

  /** Cheap connectivity check for readiness probes. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
