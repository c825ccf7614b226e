export * from './standalone.module';
export * from './standalone-server';
export * from './client/trellis-client';
