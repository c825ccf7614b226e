import type { IndexStatus, KbScope } from '@trellis/contracts';

/** A document version that never left `pending`: its `document.ingested` was not handled. */
export type StuckDocument = KbScope & {
  documentId: string;
  version: number;
  status: IndexStatus;
  contentHash: string;
  /** Sweeper re-drives of this version so far. */
  redriveCount: number;
  /** When the row last changed (ISO-8601). */
  updatedAt: string;
};

/** A chunk of a current version waiting in `embedded` or `extracted` since `updatedAt`. */
export type StuckChunk = KbScope & {
  chunkId: string;
  documentId: string;
  version: number;
  status: IndexStatus;
  contentHash: string;
  /** Sweeper re-drives of the chunk's document version so far. */
  redriveCount: number;
  updatedAt: string;
};
