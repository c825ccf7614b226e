export * from './grpc-wire';
export * from './grpc-client-tracing';
