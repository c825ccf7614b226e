export * from './records';
export * from './trellis-store';
export * from './vector-math';
export * from './derivation';
export * from './sqlite/sqlite-store';
export * from './lookups';
export { STORE } from './tokens';
