export * from './extraction.module';
export * from './extraction.service';
export * from './extractor';
export * from './extractor-registry';
export * from './extraction-report';
export * from './extraction-validation';
// The local extractor itself is not exported: loading it loads its NLP model; its threads load it (LocalExtractorPool).
export * from './llm-extractor';
export * from './budget/budget-gate';
export * from './budget/budget-resumer';
export * from './handlers/budget-resume-schedule';
