import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { RetrievalModule } from './retrieval.module';

/** The retrieval service alone, configured from the environment. */
runMain('trellis-retrieval', (config) => startTrellisProcess({ config, grpcServices: ['retrieval'], modules: () => [RetrievalModule] }));
