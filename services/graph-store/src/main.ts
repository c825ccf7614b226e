import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/platform';
import { GraphStoreModule } from './graph-store.module';

/** The graph-store service alone, configured from the environment. */
runMain('trellis-graph-store', (config) => startTrellisProcess({ config, grpcServices: ['graph'], modules: () => [GraphStoreModule] }));
