import type { IndexStatus, KbScope, OutboxEvent } from '@trellis/contracts';
import type { DocumentRecord, LlmUsage, NewDocumentVersion, StageEvent, StageRecord } from '../records';
import type { StuckDocument } from './stuck-work';

/** A document of an unfinished indexing run, as a restart finds it. */
export type UnfinishedDocument = KbScope & { documentId: string; version: number; status: IndexStatus };

/** One page of a knowledge base's documents, in id order (keyset paging on the primary key). */
export interface DocumentPage {
  /** Documents at most. */
  readonly limit: number;
  /** Only ids after this one: the last id of the previous page. */
  readonly afterId?: string;
  /** Only documents in this status. */
  readonly status?: IndexStatus;
}

/** A document version a progress read asks about. */
export interface DocumentVersionRef {
  readonly documentId: string;
  readonly version: number;
}

/** How far indexing of a document version has come. */
export interface DocumentProgress {
  /** Chunks of the document's current version, by status. */
  readonly chunkCounts: Partial<Record<IndexStatus, number>>;
  /** The version's stages, in pipeline order. */
  readonly stages: StageRecord[];
  /** LLM calls and tokens spent on the version. */
  readonly llmUsage: LlmUsage;
  /** Chunks of the version whose LLM extraction waits for the knowledge base's budget. */
  readonly pausedChunks: number;
}

/** A document and how far its current version's indexing has come, without its stages or usage. */
export interface DocumentIndexingProgress {
  readonly document: DocumentRecord;
  /** Chunks of the current version, by status. */
  readonly chunkCounts: Partial<Record<IndexStatus, number>>;
  /** Chunks of the current version whose LLM extraction waits for the knowledge base's budget. */
  readonly pausedChunks: number;
}

/** Documents with their versions, texts, index status and pipeline stage timings. */
export interface DocumentRepository {
  findDocumentBySource(scope: KbScope, sourceUri: string): Promise<DocumentRecord | null>;
  /** Stores a version and its text and makes it current, status pending; `announce` goes into the outbox in the same transaction. */
  saveDocumentVersion(scope: KbScope, doc: NewDocumentVersion, announce?: readonly OutboxEvent[]): Promise<DocumentRecord>;
  /** Records a document that could not be parsed, so its error shows in status. */
  saveFailedDocument(scope: KbScope, doc: Omit<NewDocumentVersion, 'text'>, error: string): Promise<DocumentRecord>;
  getDocument(scope: KbScope, documentId: string): Promise<DocumentRecord | null>;
  /** Every document in source order, or with `page` one page of them. */
  listDocuments(scope: KbScope, page?: DocumentPage): Promise<DocumentRecord[]>;
  countDocuments(scope: KbScope): Promise<number>;
  /** The titles of these documents (one query per batch of ids), '' where none was recorded; unknown ids are absent. */
  documentTitles(scope: KbScope, documentIds: readonly string[]): Promise<Map<string, string>>;
  getDocumentText(scope: KbScope, documentId: string, version: number): Promise<string | null>;
  /**
   * Ignored when `version` is no longer the document's current version; `announce` goes into
   * the outbox in the same transaction either way (its consumers skip superseded versions).
   */
  setDocumentStatus(
    scope: KbScope,
    documentId: string,
    version: number,
    status: IndexStatus,
    error?: string | null,
    announce?: readonly OutboxEvent[],
  ): Promise<void>;
  /** Removes the document and everything derived only from it. */
  deleteDocument(scope: KbScope, documentId: string): Promise<boolean>;
  /** Removes chunks (and the graph facts they alone supported) of versions older than `current`. */
  deleteStaleVersions(scope: KbScope, documentId: string, currentVersion: number): Promise<number>;
  /** Documents whose indexing has not finished, in every tenant: what a restart re-drives. */
  listUnfinishedDocuments(): Promise<UnfinishedDocument[]>;
  /** Documents of every tenant still `pending` and unchanged since `before` (ISO-8601), oldest first. */
  listStuckDocuments(before: string, limit: number): Promise<StuckDocument[]>;
  /**
   * Counts a sweeper re-drive of the version and restarts the wait of it and of `chunkIds`;
   * the re-drives so far, or null when the version is no longer current or finished meanwhile.
   */
  recordRedrive(scope: KbScope, documentId: string, version: number, chunkIds: readonly string[]): Promise<number | null>;
  /** Adds one piece of work to its stage's aggregate (earliest start, latest finish, counts). */
  recordStage(scope: KbScope, event: StageEvent): Promise<void>;
  /** The stages of a document version, in pipeline order. */
  listStages(scope: KbScope, documentId: string, version: number): Promise<StageRecord[]>;
  /**
   * The progress of many document versions at once, a bounded number of queries whatever
   * their number (a page of ListDocuments); every asked document is in the map.
   */
  listProgress(scope: KbScope, versions: readonly DocumentVersionRef[]): Promise<Map<string, DocumentProgress>>;
  /**
   * These documents (at most 1,000 ids) with their chunk counts, in three queries whatever
   * the size of the knowledge base: what a client polls while they index. In the order asked,
   * each once; ids the knowledge base does not hold are left out.
   */
  listIndexingProgress(scope: KbScope, documentIds: readonly string[]): Promise<DocumentIndexingProgress[]>;
}
