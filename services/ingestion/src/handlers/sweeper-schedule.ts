import { IntervalSchedule } from '@trellis/runtime';
import type { StuckWorkSweeper } from '../sweeper/stuck-work-sweeper';

/** The sweeper's schedule (TRELLIS_SWEEP_INTERVAL_MS): its own class, so processes can find it by type. */
export class SweeperSchedule extends IntervalSchedule {
  constructor(sweeper: Pick<StuckWorkSweeper, 'sweepOnce'>, intervalMs: number, onError: (error: unknown) => void) {
    super(() => sweeper.sweepOnce(), intervalMs, onError);
  }
}
