import type { KbScope, OutboxEvent } from '@trellis/contracts';
import type { PausedChunk } from '../records';

/**
 * Chunks whose LLM extraction waits because their knowledge base's LLM budget is spent. A chunk
 * is on the list once however often it is paused; the list goes with its document version and
 * with its knowledge base.
 */
export interface BudgetPauseRepository {
  pauseChunk(scope: KbScope, chunk: Omit<PausedChunk, 'pausedAt'>, at?: Date): Promise<void>;
  /** Longest paused first, at most `limit`. */
  listPausedChunks(scope: KbScope, limit: number): Promise<PausedChunk[]>;
  countPausedChunks(scope: KbScope): Promise<number>;
  /** Knowledge bases of every tenant with paused chunks: for the loop that resumes them. */
  listScopesWithPausedChunks(): Promise<KbScope[]>;
  /** Takes chunks off the list, with `announce` into the outbox in the same transaction; returns how many were on it. */
  unpauseChunks(scope: KbScope, chunkIds: readonly string[], announce?: readonly OutboxEvent[]): Promise<number>;
}
