import { Injectable } from '@nestjs/common';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { Observable } from 'rxjs';
import type { Subscription } from 'rxjs';
import type { TrellisMetrics } from '@trellis/observability';
import type { AdmissionGate, Refusal } from './admission-gate';
import { grpcMethodOf } from './grpc-method';
import type { Slot } from './request-limiter';
import type { TenantResolver } from './tenant-resolver';

/** Waiting-call bucket of callers whose tenant cannot be resolved; their handler refuses them anyway. */
export const UNRESOLVED_TENANT = '';

/** The tenant a call's metadata names, or the unresolved bucket (its handler refuses it). */
export function admissionTenant(tenants: TenantResolver, metadata: Metadata | undefined): string {
  try {
    return tenants.resolve(metadata).tenantId;
  } catch {
    return UNRESOLVED_TENANT;
  }
}

/**
 * Admission control at the gRPC edge: every Trellis call, unary or streaming, holds one of the
 * server's slots from before its handler runs until its last response message, and a call
 * past the limit and queue is refused at once with RESOURCE_EXHAUSTED and `retry-after-ms`.
 * While the event loop is further behind than a bound, new calls are refused the same way:
 * in-process work that never yields piles up as unread requests, invisible to the slot count.
 * The decision is the `AdmissionGate`'s; this adapts it to Nest.
 * The standard health and reflection services are registered on the gRPC server directly,
 * not as Nest handlers, so they never pass through here and are never shed.
 */
@Injectable()
export class GrpcAdmissionInterceptor implements NestInterceptor {
  constructor(
    private readonly gate: AdmissionGate,
    private readonly tenants: TenantResolver,
    private readonly metrics: TrellisMetrics,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const { method } = grpcMethodOf(context);
    const tenant = admissionTenant(this.tenants, context.getArgs<[unknown, Metadata | undefined]>()[1]);
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
      const refuse = ({ reason, code, details, metadata }: Refusal) => {
        this.metrics.grpcRejected.inc({ method, reason });
        subscriber.error({ code, details, metadata });
      };
      const cancel = this.gate.enter(tenant, run, refuse);
      return () => {
        closed = true;
        cancel();
        inner?.unsubscribe();
        // The caller went away (or the call ended): the slot is free either way; release is idempotent.
        slot?.release();
      };
    });
  }
}
