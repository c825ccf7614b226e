import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { GraphStoreModule } from './graph-store.module';
import { GraphWriterService } from './graph-writer.service';

/** The graph-store service alone, configured from the environment. */
runMain('trellis-graph-store', (config) =>
  startTrellisProcess({
    config,
    grpcServices: ['graph'],
    modules: () => [GraphStoreModule],
    afterStart: async (app, runtime) => {
      const summaries = await app.get(GraphWriterService).refreshPendingSummaries();
      if (summaries > 0) runtime.logger.info({ summaries }, 'finished summaries left pending by a previous run');
    },
  }),
);
