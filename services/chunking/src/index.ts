export * from './chunking.module';
export * from './chunking.service';
