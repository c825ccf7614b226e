import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { IngestionModule } from './ingestion.module';

/** The ingestion service alone, configured from the environment. */
runMain('trellis-ingestion', (config) => startTrellisProcess({ config, grpcServices: ['knowledge_base'], modules: () => [IngestionModule] }));
