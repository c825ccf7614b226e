import type { IndexStatus, KbScope } from '@trellis/contracts';

/** What the sweeper knows of indexing work that has waited too long in one status. */
interface StuckWork {
  documentId: string;
  version: number;
  status: IndexStatus;
  contentHash: string;
  /** Sweeper re-drives of this document version so far. */
  redriveCount: number;
  /** When the row last changed (ISO-8601). */
  updatedAt: string;
}

/** A document version that never left `pending`: its `document.ingested` was not handled. */
export type StuckDocument = KbScope & StuckWork;

/** A chunk of a current version waiting in `embedded` or `extracted` since `updatedAt`. */
export type StuckChunk = KbScope & StuckWork & { chunkId: string };
