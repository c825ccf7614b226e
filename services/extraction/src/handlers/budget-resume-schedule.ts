import { IntervalSchedule } from '@trellis/runtime';
import type { BudgetResumer } from '../budget/budget-resumer';

/** The budget resumer's schedule (TRELLIS_BUDGET_RESUME_INTERVAL_MS); started once the bus runs. */
export class BudgetResumeSchedule extends IntervalSchedule {
  constructor(resumer: Pick<BudgetResumer, 'resumeOnce'>, intervalMs: number, onError: (error: unknown) => void) {
    super(() => resumer.resumeOnce(), intervalMs, onError);
  }
}
