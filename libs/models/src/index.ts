export * from './chat-model';
export * from './embedding-provider';
export * from './local-hash-embedder';
export * from './openai-models';
export * from './models';
export * from './token-counter';
export * from './question-refinement';
