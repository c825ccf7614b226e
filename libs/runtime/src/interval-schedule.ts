/**
 * Runs a piece of background work (the stuck-work sweep, the resuming of extraction paused by
 * a budget) every `intervalMs` (0: never), one run at a time; a failed run is reported and the
 * next one tries again. `stop` waits for a run in flight.
 */
export class IntervalSchedule {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly work: () => Promise<unknown>,
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
    this.running = this.work()
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }
}
