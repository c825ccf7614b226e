export * from './grpc-errors';
export * from './grpc-exception.filter';
export * from './grpc-server';
export * from './runtime';
export * from './platform.module';
export * from './tenant-resolver';
export * from './event-consumer';
export * from './trellis-process';
