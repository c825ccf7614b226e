/**
 * How far behind the main thread's event loop is, right now. Query work in standalone
 * (SQLite, the hash embedder, PageRank, vector scans) is mostly synchronous, so calls queue
 * in the socket buffers rather than as concurrent handlers, where no concurrency limit can
 * see them; the loop's delay is what shows that backlog. A timer ticks every `intervalMs`;
 * the delay is the longer of how late the last tick came and how long ago it came (minus
 * the interval), so calls handled in the middle of one long busy stretch see it grow.
 */
export class EventLoopDelay {
  private lastTick = performance.now();
  private lastLateness = 0;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly intervalMs = 10) {}

  start(): this {
    if (this.timer !== undefined) return this;
    this.lastTick = performance.now();
    this.timer = setInterval(() => {
      const now = performance.now();
      this.lastLateness = Math.max(0, now - this.lastTick - this.intervalMs);
      this.lastTick = now;
    }, this.intervalMs);
    this.timer.unref?.();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Milliseconds the loop is behind: 0 when idle, the length of the current busy stretch while busy. */
  currentMs(): number {
    if (this.timer === undefined) return 0;
    return Math.max(this.lastLateness, performance.now() - this.lastTick - this.intervalMs);
  }
}
