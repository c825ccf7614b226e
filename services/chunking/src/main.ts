import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { ChunkingModule } from './chunking.module';

/** The chunking service alone, configured from the environment. */
runMain('trellis-chunking', (config) => startTrellisProcess({ config, grpcServices: [], modules: () => [ChunkingModule] }));
