import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { ExtractionModule } from './extraction.module';

/** The extraction service alone, configured from the environment. */
runMain('trellis-extraction', (config) => startTrellisProcess({ config, grpcServices: [], modules: () => [ExtractionModule] }));
