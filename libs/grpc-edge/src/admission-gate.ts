import { Metadata, status } from '@grpc/grpc-js';
import { RETRY_AFTER_HEADER } from '@trellis/wire';
import type { LoopDelaySource } from './event-loop-delay';
import { AdmissionRejected } from './request-limiter';
import type { RejectReason, RequestLimiter, Slot } from './request-limiter';

/** A refused call's status: RESOURCE_EXHAUSTED, why, and `retry-after-ms` in its trailers. */
export interface Refusal {
  readonly reason: RejectReason;
  readonly code: status;
  readonly details: string;
  readonly metadata: Metadata;
}

/** Refuse new calls while the loop is further behind than `maxMs` (synchronous work piling up). */
export interface LoopBound {
  readonly delay: LoopDelaySource;
  readonly maxMs: number;
}

const nothingToCancel = () => undefined;

/**
 * The admission decision for one server, without a transport: the event-loop bound first,
 * then a slot from the limiter (now, after a wait, or refused). The Nest interceptor of each
 * service and the standalone server's front thread both pass their calls through one of these.
 */
export class AdmissionGate {
  constructor(
    readonly limiter: RequestLimiter,
    private readonly loop?: LoopBound,
  ) {}

  /**
   * Asks for a slot for a call of `tenant`: `run` gets it (at once or when one frees), or
   * `refuse` gets the refusal. Returns what to call if the caller goes away while waiting.
   */
  enter(tenant: string, run: (slot: Slot) => void, refuse: (refusal: Refusal) => void): () => void {
    if (this.loop !== undefined && this.loop.delay.currentMs() > this.loop.maxMs) {
      refuse(this.refusal('event_loop_busy'));
      return nothingToCancel;
    }
    const admission = this.limiter.acquire(tenant);
    if (admission.kind === 'admitted') {
      run(admission.slot);
      return nothingToCancel;
    }
    if (admission.kind === 'rejected') {
      refuse(this.refusal(admission.reason));
      return nothingToCancel;
    }
    admission.slot.then(run, (error: unknown) => refuse(this.refusal(error instanceof AdmissionRejected ? error.reason : 'queue_timeout')));
    return admission.cancel;
  }

  /**
   * The refusal, with a back-off long enough for the queue (or the loop's backlog) to move on,
   * short enough not to idle a client; spread ±25 % so that callers refused together do not
   * all come back together.
   */
  refusal(reason: RejectReason): Refusal {
    const { maxConcurrent, maxQueued, maxQueueWaitMs } = this.limiter.limits;
    const loopMs = this.loop?.maxMs ?? 0;
    const backOffMs = reason === 'event_loop_busy' ? Math.max(250, loopMs * 5) : Math.max(100, maxQueueWaitMs * 4);
    const retryAfterMs = Math.round(backOffMs * (0.75 + Math.random() * 0.5));
    const metadata = new Metadata();
    metadata.set(RETRY_AFTER_HEADER, String(retryAfterMs));
    const why =
      reason === 'queue_full'
        ? `${maxConcurrent} calls are running and ${maxQueued} waiting`
        : reason === 'queue_timeout'
          ? `${maxConcurrent} calls are running and no slot became free within ${maxQueueWaitMs} ms`
          : `the server is more than ${loopMs} ms behind on work already accepted`;
    return { reason, code: status.RESOURCE_EXHAUSTED, details: `server overloaded (${reason}): ${why}; retry after ${retryAfterMs} ms`, metadata };
  }
}
