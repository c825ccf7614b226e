export * from './standalone-server';
