/** Calls the front lets wait inside the core at once: the core runs query work one call at a time. */
export const MAX_WAITING_IN_CORE = 1;

/** How often waiting calls look again whether the core has started the previous one. */
const POLL_MS = 1;

/** A pace measured longer ago than this says nothing of the core now. */
const PACE_MAX_AGE_MS = 1_000;

/** Weight of the newest interval in the pace (an exponential moving average). */
const PACE_WEIGHT = 0.2;

interface Waiter {
  readonly untilMs: number;
  readonly go: (ended: () => void) => void;
  readonly expire: () => void;
}

/**
 * Hands admitted calls to the core no faster than it starts them. The core's query work is
 * synchronous, so a call forwarded while it is busy waits unread in its socket, beyond any
 * limit: sixteen forwarded at once would make the last wait for the fifteen before it. Here a
 * call is forwarded while fewer than `maxWaiting` forwarded calls have not started in the
 * core; calls that await I/O there (a language model, the embedding worker) have started, so
 * they still run side by side up to the slot limit. A call that cannot be forwarded by its
 * `untilMs` is expired (refused), so its caller learns it at once instead of queueing unseen;
 * one that could not be reached by then at the pace the core has been taking calls off the
 * queue is expired as it arrives, rather than after waiting for nothing.
 */
export class CorePacer {
  private forwarded = 0;
  private readonly waiting: Waiter[] = [];
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Milliseconds between calls forwarded off the queue, while there was one; 0 when unknown. */
  private paceMs = 0;
  private lastForwardAt = -Infinity;

  constructor(
    /** Calls the core is running (`RunningCalls.count`). */
    private readonly coreRunning: () => number,
    private readonly maxWaiting = MAX_WAITING_IN_CORE,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Forwarded calls the core has not started yet. */
  waitingInCore(): number {
    return this.forwarded - this.coreRunning();
  }

  /**
   * `go` runs when the call may be forwarded and gets what to call when it ends; `expire` runs
   * instead if that is not by `untilMs`. Returns a cancel for a caller that goes away first.
   */
  submit(untilMs: number, go: (ended: () => void) => void, expire: () => void): () => void {
    const now = this.now();
    const pace = now - this.lastForwardAt <= PACE_MAX_AGE_MS ? this.paceMs : 0;
    if (this.waiting.length > 0 && this.waiting.length * pace > untilMs - now) {
      expire();
      return () => undefined;
    }
    const waiter: Waiter = { untilMs, go, expire };
    this.waiting.push(waiter);
    this.pump(waiter);
    return () => {
      const index = this.waiting.indexOf(waiter);
      if (index >= 0) this.waiting.splice(index, 1);
      this.schedule();
    };
  }

  /** Expires late calls, forwards what the core can take; `arriving` is a call being submitted (it has not waited). */
  private pump(arriving?: Waiter): void {
    const now = this.now();
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const waiter = this.waiting[i]!;
      if (waiter.untilMs <= now) {
        this.waiting.splice(i, 1);
        waiter.expire();
      }
    }
    while (this.waiting.length > 0 && this.waitingInCore() < this.maxWaiting) {
      const waiter = this.waiting.shift()!;
      this.measurePace(now, waiter !== arriving);
      this.forwarded += 1;
      let ended = false;
      waiter.go(() => {
        if (ended) return;
        ended = true;
        this.forwarded -= 1;
        this.pump();
      });
    }
    this.schedule();
  }

  /** The core's pace is how often a call that waited could be forwarded (the time since the forward before it). */
  private measurePace(now: number, waited: boolean): void {
    const interval = now - this.lastForwardAt;
    if (waited && interval <= PACE_MAX_AGE_MS) this.paceMs = this.paceMs === 0 ? interval : this.paceMs + PACE_WEIGHT * (interval - this.paceMs);
    this.lastForwardAt = now;
  }

  private schedule(): void {
    if (this.waiting.length > 0 && this.timer === undefined) {
      this.timer = setInterval(() => this.pump(), POLL_MS);
    } else if (this.waiting.length === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
