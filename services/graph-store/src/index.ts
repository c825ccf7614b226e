export * from './graph-store.module';
export * from './graph-writer.service';
export * from './graph-query.service';
export * from './entity-names';
export * from './entity-resolver';
export * from './resolution-policy';
export * from './graph-edit.service';
