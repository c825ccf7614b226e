import 'reflect-metadata';
import { runMain, startTrellisProcess } from '@trellis/runtime';
import { ExtractionModule } from './extraction.module';
import { BudgetResumeSchedule } from './handlers/budget-resume-schedule';

/** The extraction service alone, configured from the environment. */
runMain('trellis-extraction', (config) =>
  startTrellisProcess({
    config,
    grpcServices: [],
    modules: () => [ExtractionModule],
    // Once the bus runs: the resumer publishes.
    afterStart: async (app) => app.get(BudgetResumeSchedule).start(),
  }),
);
