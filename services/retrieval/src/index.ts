export * from './retrieval.module';
export * from './retrieval.service';
export * from './graph-retriever';
export * from './chunk-retriever';
export * from './personalized-pagerank';
export * from './second-hop';
export * from './question-decomposer';
