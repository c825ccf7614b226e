import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import { Metadata, status } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import type { Subscription } from 'rxjs';
import type { TrellisMetrics } from '@trellis/observability';
import type { EventLoopDelay } from './event-loop-delay';
import { grpcMethodOf } from './grpc-method';
import { AdmissionRejected } from './request-limiter';
import type { RejectReason, RequestLimiter, Slot } from './request-limiter';
import type { TenantResolver } from './tenant-resolver';
import { RETRY_AFTER_HEADER } from '@trellis/wire';

/** Waiting-call bucket of callers whose tenant cannot be resolved; their handler refuses them anyway. */
const UNRESOLVED_TENANT = '';

/**
 * Admission control at the gRPC edge: every Trellis call, unary or streaming, holds one of the
 * server's slots from before its handler runs until its last response message, and a call
 * past the limit and queue is refused at once with RESOURCE_EXHAUSTED and `retry-after-ms`.
 * While the event loop is further behind than a bound, new calls are refused the same way:
 * in-process work that never yields piles up as unread requests, invisible to the slot count.
 * The standard health and reflection services are registered on the gRPC server directly,
 * not as Nest handlers, so they never pass through here and are never shed.
 */
@Injectable()
export class GrpcAdmissionInterceptor implements NestInterceptor {
  constructor(
    private readonly limiter: RequestLimiter,
    private readonly tenants: TenantResolver,
    private readonly metrics: TrellisMetrics,
    /** Refuse new calls while the event loop is further behind than `maxMs` (synchronous work piling up). */
    private readonly loop?: { readonly delay: EventLoopDelay; readonly maxMs: number },
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const { method } = grpcMethodOf(context);
    const tenant = this.tenantOf(context.getArgs<[unknown, Metadata | undefined]>()[1]);
    return new Observable<unknown>((subscriber) => {
      let slot: Slot | undefined;
      let inner: Subscription | undefined;
      let closed = false;
      const run = (granted: Slot) => {
        if (closed) return granted.release();
        slot = granted;
        inner = next.handle().subscribe({
          next: (value) => subscriber.next(value),
          error: (error: unknown) => {
            granted.release();
            subscriber.error(error);
          },
          complete: () => {
            granted.release();
            subscriber.complete();
          },
        });
      };
      const refuse = (reason: RejectReason) => {
        this.metrics.grpcRejected.inc({ method, reason });
        subscriber.error(this.refusal(reason));
      };
      if (this.loop !== undefined && this.loop.delay.currentMs() > this.loop.maxMs) {
        refuse('event_loop_busy');
        return;
      }
      const admission = this.limiter.acquire(tenant);
      let cancel: (() => void) | undefined;
      if (admission.kind === 'admitted') run(admission.slot);
      else if (admission.kind === 'rejected') refuse(admission.reason);
      else {
        cancel = admission.cancel;
        admission.slot.then(run, (error: unknown) => refuse(error instanceof AdmissionRejected ? error.reason : 'queue_timeout'));
      }
      return () => {
        closed = true;
        cancel?.();
        inner?.unsubscribe();
        // The caller went away (or the call ended): the slot is free either way; release is idempotent.
        slot?.release();
      };
    });
  }

  private tenantOf(metadata: Metadata | undefined): string {
    try {
      return this.tenants.resolve(metadata).tenantId;
    } catch {
      return UNRESOLVED_TENANT;
    }
  }

  /** The refusal, with a back-off long enough for the queue (or the loop's backlog) to move on, short enough not to idle a client. */
  private refusal(reason: RejectReason): { code: status; details: string; metadata: Metadata } {
    const { maxConcurrent, maxQueued, maxQueueWaitMs } = this.limiter.limits;
    const retryAfterMs = reason === 'event_loop_busy' ? Math.max(250, (this.loop?.maxMs ?? 0) * 5) : Math.max(100, maxQueueWaitMs * 4);
    const metadata = new Metadata();
    metadata.set(RETRY_AFTER_HEADER, String(retryAfterMs));
    const why =
      reason === 'queue_full'
        ? `${maxConcurrent} calls are running and ${maxQueued} waiting`
        : reason === 'queue_timeout'
          ? `${maxConcurrent} calls are running and no slot became free within ${maxQueueWaitMs} ms`
          : `the server is more than ${this.loop?.maxMs ?? 0} ms behind on work already accepted`;
    return { code: status.RESOURCE_EXHAUSTED, details: `server overloaded (${reason}): ${why}; retry after ${retryAfterMs} ms`, metadata };
  }
}
