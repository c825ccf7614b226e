import type { IndexStatus, KbScope, OutboxEvent } from '@trellis/contracts';
import type { ChunkFilter, ChunkRecord, NewChunk, ScoredChunk } from '../records';
import type { StuckChunk } from './stuck-work';

/** Chunks of document versions with their embeddings, index status and search. */
export interface ChunkRepository {
  /** Upserts chunks with their embeddings; status becomes embedded. */
  upsertChunks(scope: KbScope, chunks: readonly NewChunk[]): Promise<void>;
  getChunk(scope: KbScope, chunkId: string): Promise<ChunkRecord | null>;
  getChunks(scope: KbScope, chunkIds: readonly string[]): Promise<ChunkRecord[]>;
  listChunks(scope: KbScope, documentId: string, version: number): Promise<ChunkRecord[]>;
  /** `announce` goes into the outbox in the same transaction as the status. */
  setChunkStatus(scope: KbScope, chunkId: string, status: IndexStatus, error?: string | null, announce?: readonly OutboxEvent[]): Promise<void>;
  /**
   * Sets the chunk's status to graphed and resolves to the chunks of its document's current
   * version still not graphed (0: the version is complete), from a counter that only the
   * chunk's own transition moves, so a replayed chunk does not count twice. Null when the
   * chunk is gone or belongs to an older version.
   */
  markChunkGraphed(scope: KbScope, chunkId: string): Promise<number | null>;
  /** Chunk counts per status for the document's current version. */
  countChunksByStatus(scope: KbScope, documentId: string): Promise<Partial<Record<IndexStatus, number>>>;
  /**
   * Chunks of every tenant's current versions in `embedded` or `extracted` since before
   * `before` (ISO-8601), of documents not failed, oldest first. Chunks paused by their knowledge
   * base's LLM budget are waiting, not stuck, and are left out.
   */
  listStuckChunks(before: string, limit: number): Promise<StuckChunk[]>;
  /**
   * The current chunks of the documents whose titleKey is one of `keys`, per key: the pages
   * about a name. At most `limit` chunks in all, in document and chunk order.
   */
  chunkIdsOfDocumentsTitled(scope: KbScope, keys: readonly string[], limit: number): Promise<Map<string, string[]>>;
  /** Nearest chunks of current document versions by cosine similarity. */
  searchChunksByVector(scope: KbScope, vector: Float32Array, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]>;
  /** BM25 ranking of current chunks for the words of `query`. */
  searchChunksFullText(scope: KbScope, query: string, k: number, filter?: ChunkFilter): Promise<ScoredChunk[]>;
}
