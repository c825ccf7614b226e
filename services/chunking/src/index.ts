export * from './chunking.module';
export * from './chunking.service';
export * from './text-splitter';
