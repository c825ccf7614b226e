export * from './free-port';
export * from './document-fixtures';
export * from './fake-openai-server';
export * from './standalone-process';
export * from './distributed-processes';
export * from './fake-graph-extraction';
export * from './test-outbox';
