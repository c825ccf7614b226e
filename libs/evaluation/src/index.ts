export * from './retrieval-evaluation';
export * from './passage-ranking';
