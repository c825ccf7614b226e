export * from './graph-records';
export * from './derivation';
export * from './graph-overlay';
export * from './graph-edit-encoding';
export * from './graph-edit-records';
export * from './graph-edit-policy';
export * from './summary-refresher';
