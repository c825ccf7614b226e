export * from './retrieval.module';
export * from './retrieval.service';
export * from './graph-retriever';
export * from './chunk-retriever';
