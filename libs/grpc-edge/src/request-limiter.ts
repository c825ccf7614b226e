/** Limits of one server's gRPC admission control. */
export interface RequestLimits {
  /** Calls (unary and streaming) that may run at once. */
  readonly maxConcurrent: number;
  /** Calls that may wait for a slot once all are taken; past it, new calls are refused at once. */
  readonly maxQueued: number;
  /** Longest a call waits in the queue before it is refused. */
  readonly maxQueueWaitMs: number;
}

/** Why a call was refused; a metric label, so a bounded set. */
export type RejectReason = 'queue_full' | 'queue_timeout' | 'event_loop_busy';

/** A granted slot: call `release` exactly once when the call ends (later calls are ignored). */
export interface Slot {
  release(): void;
}

/** The outcome of asking for a slot: a slot now, a wait, or an immediate refusal. */
export type Admission =
  | { readonly kind: 'admitted'; readonly slot: Slot }
  | { readonly kind: 'queued'; readonly slot: Promise<Slot>; cancel(): void }
  | { readonly kind: 'rejected'; readonly reason: RejectReason };

/** Thrown (as the queued promise's rejection) when a waiting call is refused. */
export class AdmissionRejected extends Error {
  constructor(readonly reason: RejectReason) {
    super(reason === 'queue_full' ? 'server is at its concurrency limit and its queue is full' : 'no slot became free in time');
    this.name = 'AdmissionRejected';
  }
}

interface Waiter {
  readonly tenant: string;
  readonly resolve: (slot: Slot) => void;
  readonly reject: (error: AdmissionRejected) => void;
  timer?: ReturnType<typeof setTimeout>;
}

/**
 * Admission control for one server, fair across tenants. At most `maxConcurrent` calls run;
 * up to `maxQueued` more wait at most `maxQueueWaitMs`. Waiting calls are kept per tenant and
 * a freed slot goes to the next tenant in turn (round-robin), so a tenant with a thousand
 * calls waiting gets no more turns than one with a single call. When the queue is full, a
 * newcomer from a tenant with fewer waiting calls than the one with the most takes the
 * place of that tenant's newest waiting call, so one tenant's flood cannot fill the queue
 * and lock the others out. Plain class, no framework: the gRPC interceptor adapts it.
 */
export class RequestLimiter {
  private running = 0;
  private queuedCount = 0;
  /** Waiting calls per tenant, oldest first; a Map keeps the tenants' turn order. */
  private readonly queues = new Map<string, Waiter[]>();
  private readonly runningByTenant = new Map<string, number>();

  constructor(
    readonly limits: RequestLimits,
    /** Told about every change of the running and waiting counts (gauges). */
    private readonly onChange: (running: number, queued: number) => void = () => undefined,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get queued(): number {
    return this.queuedCount;
  }

  /** Calls of a tenant running now (for tests and diagnostics). */
  inFlightOf(tenant: string): number {
    return this.runningByTenant.get(tenant) ?? 0;
  }

  acquire(tenant: string): Admission {
    if (this.running < this.limits.maxConcurrent && this.queuedCount === 0) return { kind: 'admitted', slot: this.grant(tenant) };
    if (this.queuedCount >= this.limits.maxQueued && !this.evictForFairness(tenant)) {
      return { kind: 'rejected', reason: 'queue_full' };
    }
    let waiter: Waiter | undefined;
    const slot = new Promise<Slot>((resolve, reject) => {
      waiter = { tenant, resolve, reject };
    });
    const entry = waiter as Waiter;
    entry.timer = setTimeout(() => this.refuse(entry, 'queue_timeout'), this.limits.maxQueueWaitMs);
    entry.timer.unref?.();
    const queue = this.queues.get(tenant);
    if (queue) queue.push(entry);
    else this.queues.set(tenant, [entry]);
    this.queuedCount += 1;
    this.changed();
    return {
      kind: 'queued',
      slot,
      cancel: () => {
        if (this.remove(entry)) this.changed();
      },
    };
  }

  private grant(tenant: string): Slot {
    this.running += 1;
    this.runningByTenant.set(tenant, (this.runningByTenant.get(tenant) ?? 0) + 1);
    this.changed();
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.running -= 1;
        const left = (this.runningByTenant.get(tenant) ?? 1) - 1;
        if (left === 0) this.runningByTenant.delete(tenant);
        else this.runningByTenant.set(tenant, left);
        this.dispatch();
        this.changed();
      },
    };
  }

  /** Hands free slots to waiting calls, one tenant after another. */
  private dispatch(): void {
    while (this.running < this.limits.maxConcurrent && this.queuedCount > 0) {
      const next = this.queues.entries().next().value;
      if (next === undefined) return;
      const [tenant, queue] = next;
      const waiter = queue.shift() as Waiter;
      this.queues.delete(tenant);
      // The tenant goes to the back of the turn order if it still has calls waiting.
      if (queue.length > 0) this.queues.set(tenant, queue);
      this.queuedCount -= 1;
      clearTimeout(waiter.timer);
      waiter.resolve(this.grant(tenant));
    }
  }

  /** Makes room for `tenant` by refusing the newest waiting call of the tenant with the most, if that is another tenant with more. */
  private evictForFairness(tenant: string): boolean {
    const mine = this.queues.get(tenant)?.length ?? 0;
    let heaviest: Waiter[] | undefined;
    for (const [other, queue] of this.queues) {
      if (other !== tenant && queue.length > mine + 1 && queue.length > (heaviest?.length ?? 0)) heaviest = queue;
    }
    const victim = heaviest?.[heaviest.length - 1];
    if (victim === undefined) return false;
    this.refuse(victim, 'queue_full');
    return true;
  }

  private refuse(waiter: Waiter, reason: RejectReason): void {
    if (!this.remove(waiter)) return;
    this.changed();
    waiter.reject(new AdmissionRejected(reason));
  }

  private remove(waiter: Waiter): boolean {
    const queue = this.queues.get(waiter.tenant);
    const index = queue?.indexOf(waiter) ?? -1;
    if (queue === undefined || index < 0) return false;
    queue.splice(index, 1);
    if (queue.length === 0) this.queues.delete(waiter.tenant);
    this.queuedCount -= 1;
    clearTimeout(waiter.timer);
    return true;
  }

  private changed(): void {
    this.onChange(this.running, this.queuedCount);
  }
}
