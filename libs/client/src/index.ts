export * from './trellis-client';
