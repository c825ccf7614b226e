/** Something that knows how far behind an event loop is. */
export interface LoopDelaySource {
  /** Milliseconds the loop is behind: 0 when idle, the length of the current busy stretch while busy. */
  currentMs(): number;
}

/** Slots of the shared view: when the last tick came and how late it was, in microseconds since the epoch. */
const LAST_TICK = 0;
const LAST_LATENESS = 1;

/** Milliseconds since the epoch with sub-millisecond precision, comparable across threads (unlike `performance.now()`). */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The delay a loop ticking every `intervalMs` is behind, from its shared tick record. */
function delayOf(view: BigInt64Array, intervalMs: number): number {
  const lastTick = Number(Atomics.load(view, LAST_TICK)) / 1000;
  const lastLateness = Number(Atomics.load(view, LAST_LATENESS)) / 1000;
  return Math.max(lastLateness, epochMs() - lastTick - intervalMs);
}

/**
 * How far behind the main thread's event loop is, right now. Query work in standalone
 * (SQLite, the hash embedder, PageRank, vector scans) is mostly synchronous, so calls queue
 * in the socket buffers rather than as concurrent handlers, where no concurrency limit can
 * see them; the loop's delay is what shows that backlog. A timer ticks every `intervalMs`;
 * the delay is the longer of how late the last tick came and how long ago it came (minus
 * the interval), so calls handled in the middle of one long busy stretch see it grow.
 * The ticks are kept in shared memory, so another thread can read the delay (and see the
 * loop's heartbeat) while this one is busy: see `SharedLoopDelay`.
 */
export class EventLoopDelay implements LoopDelaySource {
  /** Pass to `SharedLoopDelay` in another thread (a worker's `workerData`). */
  readonly shared = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT);
  private readonly view = new BigInt64Array(this.shared);
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly intervalMs = 10) {}

  start(): this {
    if (this.timer !== undefined) return this;
    this.record(epochMs(), 0);
    this.timer = setInterval(() => {
      const now = epochMs();
      const lastTick = Number(Atomics.load(this.view, LAST_TICK)) / 1000;
      this.record(now, Math.max(0, now - lastTick - this.intervalMs));
    }, this.intervalMs);
    this.timer.unref?.();
    return this;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  currentMs(): number {
    if (this.timer === undefined) return 0;
    return delayOf(this.view, this.intervalMs);
  }

  /**
   * Says the loop runs again, now: called when a call's handler ends. A long synchronous call
   * leaves the last tick before it; until the timer's next turn, another thread would read that
   * gap as a loop still busy and refuse a caller's next call for a backlog there is none of.
   */
  markRunning(): void {
    if (this.timer !== undefined) this.record(epochMs(), 0);
  }

  private record(tickMs: number, latenessMs: number): void {
    Atomics.store(this.view, LAST_LATENESS, BigInt(Math.round(latenessMs * 1000)));
    Atomics.store(this.view, LAST_TICK, BigInt(Math.round(tickMs * 1000)));
  }
}

/** Another thread's view of an `EventLoopDelay`: the same delay, readable while that loop is busy. */
export class SharedLoopDelay implements LoopDelaySource {
  private readonly view: BigInt64Array;

  constructor(
    shared: SharedArrayBuffer,
    private readonly intervalMs: number,
  ) {
    this.view = new BigInt64Array(shared);
  }

  currentMs(): number {
    if (Atomics.load(this.view, LAST_TICK) === 0n) return 0;
    return delayOf(this.view, this.intervalMs);
  }

  /** Milliseconds since the loop last ticked (its heartbeat); Infinity before its first tick. */
  sinceLastTickMs(): number {
    const lastTick = Atomics.load(this.view, LAST_TICK);
    return lastTick === 0n ? Infinity : epochMs() - Number(lastTick) / 1000;
  }
}
