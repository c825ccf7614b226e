export * from './logger';
export * from './metrics';
export * from './cached-reading';
export * from './http-probes';
export * from './llm-prices';
export * from './telemetry-settings';
export * from './tracing';
export * from './bounded-check';
