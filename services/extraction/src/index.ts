export * from './extraction.module';
export * from './extraction.service';
export * from './extractor';
export * from './local-extractor';
export * from './llm-extractor';
