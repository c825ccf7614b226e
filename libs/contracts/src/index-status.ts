/** Where a document or chunk is in the indexing pipeline. Stored as these strings. */
export type IndexStatus = 'pending' | 'chunked' | 'embedded' | 'extracted' | 'graphed' | 'failed';

export const INDEX_STATUSES: readonly IndexStatus[] = [
  'pending',
  'chunked',
  'embedded',
  'extracted',
  'graphed',
  'failed',
];
