export * from './query-terms';
export * from './bm25';
export * from './document-terms';
export * from './porter-terms';
export * from './text-postings';
