export * from './grpc-errors';
export * from './grpc-exception.filter';
export * from './grpc-server';
export * from './grpc-reflection';
export * from './grpc-telemetry.interceptor';
export * from './tenant-resolver';
export * from './graph-actor';
export * from './malformed-request';
export * from './grpc-method';
export * from './request-limiter';
export * from './admission-gate';
export * from './grpc-admission.interceptor';
export * from './event-loop-delay';
export * from './lingering-close';
// The client's half of the wire, re-exported for the servers that also call other services.
export { ACTOR_HEADER, GRPC_LOADER_OPTIONS, MAX_GRPC_MESSAGE_BYTES, RETRY_AFTER_HEADER, grpcClientTracing, protoDirectory } from '@trellis/wire';
