import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { IngestionModule } from './ingestion.module';
import { SweeperSchedule } from './handlers/sweeper-schedule';

/** The ingestion service alone, configured from the environment. */
runMain('trellis-ingestion', (config) =>
  startTrellisProcess({
    config,
    grpcServices: ['knowledge_base'],
    modules: () => [IngestionModule],
    // Once the bus runs: the sweeper publishes.
    afterStart: async (app) => app.get(SweeperSchedule).start(),
  }),
);
