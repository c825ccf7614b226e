export * from './access-settings';
export * from './config';
export * from './embedding-settings';
export * from './http-api-settings';
export * from './llm-settings';
export * from './outbox-settings';
export * from './resolution-defaults';
export * from './runtime-mode';
