export * from './grpc-errors';
export * from './grpc-exception.filter';
export * from './grpc-server';
export * from './grpc-telemetry.interceptor';
export * from './grpc-client-telemetry';
export * from './tenant-resolver';
export * from './graph-actor';
export * from './malformed-request';
