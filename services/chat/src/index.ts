export * from './chat.module';
export * from './chat-engine';
export * from './answer-composer';
export * from './retrieval-port';
export * from './grpc-retrieval-port';
