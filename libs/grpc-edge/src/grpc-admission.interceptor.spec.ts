import 'reflect-metadata';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { Metadata, status } from '@grpc/grpc-js';
import { Observable, Subject, lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { TrellisMetrics } from '@trellis/observability';
import { RETRY_AFTER_HEADER } from '@trellis/wire';
import { AdmissionGate } from './admission-gate';
import { GrpcAdmissionInterceptor } from './grpc-admission.interceptor';
import { EventLoopDelay } from './event-loop-delay';
import { RequestLimiter } from './request-limiter';
import { TenantResolver } from './tenant-resolver';

class RetrievalController {
  retrieveChunks(): void {}
}

function rpcContext(metadata = new Metadata()): ExecutionContextHost {
  const context = new ExecutionContextHost([{}, metadata, {}], RetrievalController, RetrievalController.prototype.retrieveChunks);
  context.setType('rpc');
  return context;
}

function setup(limits = { maxConcurrent: 1, maxQueued: 0, maxQueueWaitMs: 50 }, loop?: { delay: EventLoopDelay; maxMs: number }) {
  const metrics = new TrellisMetrics('test');
  const limiter = new RequestLimiter(limits);
  const interceptor = new GrpcAdmissionInterceptor(new AdmissionGate(limiter, loop), new TenantResolver(new Map()), metrics);
  return { metrics, limiter, interceptor };
}

async function rejectedTotal(metrics: TrellisMetrics): Promise<Record<string, number>> {
  const values = (await metrics.grpcRejected.get()).values;
  return Object.fromEntries(values.map((v) => [`${String(v.labels.method)}/${String(v.labels.reason)}`, v.value]));
}

interface Refusal {
  readonly code: number;
  readonly details: string;
  readonly metadata: Metadata;
}

/** The error a call ended with; fails the test when it succeeded. */
async function refusalOf(call: Observable<unknown>): Promise<Refusal> {
  try {
    await lastValueFrom(call);
  } catch (error) {
    return error as Refusal;
  }
  throw new Error('the call was not refused');
}

describe('GrpcAdmissionInterceptor', () => {
  it('holds a slot while the handler runs and frees it when the response completes', async () => {
    const { limiter, interceptor } = setup();
    const response = new Subject<string>();
    const result = lastValueFrom(interceptor.intercept(rpcContext(), { handle: () => response }));
    expect(limiter.inFlight).toBe(1);
    response.next('answer');
    response.complete();
    await expect(result).resolves.toBe('answer');
    expect(limiter.inFlight).toBe(0);
  });

  it('refuses a call past the limit with RESOURCE_EXHAUSTED, a message and retry-after-ms, without running its handler', async () => {
    const { metrics, interceptor } = setup();
    const running = interceptor.intercept(rpcContext(), { handle: () => new Subject() }).subscribe();
    let ran = false;
    const error = await refusalOf(
      interceptor.intercept(rpcContext(), {
        handle: () => {
          ran = true;
          return new Subject();
        },
      }),
    );
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toMatch(/^server overloaded \(queue_full\): 1 calls are running and 0 waiting; retry after \d+ ms$/);
    expect(Number(error.metadata.get(RETRY_AFTER_HEADER)[0])).toBeGreaterThan(0);
    expect(ran).toBe(false);
    expect(await rejectedTotal(metrics)).toEqual({ 'RetrieveChunks/queue_full': 1 });
    running.unsubscribe();
  });

  it('frees the slot when the caller goes away before the handler finishes', () => {
    const { limiter, interceptor } = setup();
    const call = interceptor.intercept(rpcContext(), { handle: () => new Observable<never>() }).subscribe();
    expect(limiter.inFlight).toBe(1);
    call.unsubscribe();
    expect(limiter.inFlight).toBe(0);
  });

  it('frees the slot when the handler fails, and passes its error on', async () => {
    const { limiter, interceptor } = setup();
    const failing = new Subject<never>();
    const result = lastValueFrom(interceptor.intercept(rpcContext(), { handle: () => failing })).catch((e: unknown) => e);
    failing.error(new Error('boom'));
    await expect(result).resolves.toMatchObject({ message: 'boom' });
    expect(limiter.inFlight).toBe(0);
  });

  it('refuses new calls while the event loop is further behind than the bound', async () => {
    const delay = new EventLoopDelay(5).start();
    try {
      const { metrics, interceptor } = setup({ maxConcurrent: 100, maxQueued: 0, maxQueueWaitMs: 50 }, { delay, maxMs: 20 });
      const busyUntil = performance.now() + 60;
      while (performance.now() < busyUntil) {
        // Keeps the loop busy, as synchronous query work does.
      }
      const error = await refusalOf(interceptor.intercept(rpcContext(), { handle: () => new Subject() }));
      expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(error.details).toMatch(/event_loop_busy/);
      expect(await rejectedTotal(metrics)).toEqual({ 'RetrieveChunks/event_loop_busy': 1 });
    } finally {
      delay.stop();
    }
  });

  it('leaves non-gRPC contexts alone', async () => {
    const { limiter, interceptor } = setup({ maxConcurrent: 1, maxQueued: 0, maxQueueWaitMs: 50 });
    const context = new ExecutionContextHost([]);
    context.setType('http');
    const held = interceptor.intercept(rpcContext(), { handle: () => new Subject() }).subscribe();
    const result = lastValueFrom(interceptor.intercept(context, { handle: () => new Observable<string>((s) => (s.next('ok'), s.complete())) }));
    await expect(result).resolves.toBe('ok');
    expect(limiter.inFlight).toBe(1);
    held.unsubscribe();
  });
});
