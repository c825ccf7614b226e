export * from './extraction.module';
export * from './extraction.service';
export * from './extractor';
export * from './extractor-registry';
export * from './extraction-report';
export * from './extraction-validation';
export * from './local/local-extractor';
export * from './llm-extractor';
