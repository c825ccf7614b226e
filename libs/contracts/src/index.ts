export * from './errors';
export * from './request-limits';
export * from './ids';
export * from './topics';
export * from './index-status';
export * as events from './generated/trellis/events/v1/indexing';
export * as v1 from './generated/index.trellis.v1';
export * from './graph-messages';
export { FILE_DESCRIPTOR_SET_BASE64 } from './generated/descriptor-set';
