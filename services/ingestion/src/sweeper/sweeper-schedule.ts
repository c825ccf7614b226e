import type { StuckWorkSweeper } from './stuck-work-sweeper';

/**
 * Runs the sweeper every `intervalMs` (0: never), one sweep at a time; a failed sweep is
 * reported and the next one tries again. `stop` waits for a sweep in flight.
 */
export class SweeperSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly sweeper: Pick<StuckWorkSweeper, 'sweepOnce'>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.intervalMs <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private tick(): void {
    if (this.running !== undefined) return;
    this.running = this.sweeper
      .sweepOnce()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }
}
