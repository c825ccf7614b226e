export * from './ingestion.module';
export * from './knowledge-base.service';
export * from './document-ingestion.service';
export * from './parsing/document-parser';
export { SUPPORTED_EXTENSIONS, resolveMimeType } from './parsing/mime-types';
export { toDocumentMessage, toKnowledgeBaseMessage } from './handlers/messages';
export * from './document-reindex.service';
