import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdmissionRejected, RequestLimiter } from './request-limiter';
import type { Admission, Slot } from './request-limiter';

const LIMITS = { maxConcurrent: 2, maxQueued: 3, maxQueueWaitMs: 50 };

function admitted(admission: Admission): Slot {
  if (admission.kind !== 'admitted') throw new Error(`expected a slot, got ${admission.kind}`);
  return admission.slot;
}

function queued(admission: Admission): Promise<Slot> {
  if (admission.kind !== 'queued') throw new Error(`expected a wait, got ${admission.kind}`);
  return admission.slot;
}

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('RequestLimiter', () => {
  it('admits up to the limit at once, then queues, then refuses when the queue is full', () => {
    const limiter = new RequestLimiter(LIMITS);
    admitted(limiter.acquire('a'));
    admitted(limiter.acquire('a'));
    for (let i = 0; i < 3; i += 1) void queued(limiter.acquire('a')).catch(() => undefined);
    expect(limiter.acquire('a')).toEqual({ kind: 'rejected', reason: 'queue_full' });
    expect(limiter.inFlight).toBe(2);
    expect(limiter.queued).toBe(3);
  });

  it('hands a released slot to the oldest waiting call and reports every change', async () => {
    const changes: Array<[number, number]> = [];
    const limiter = new RequestLimiter({ ...LIMITS, maxConcurrent: 1 }, (running, waiting) => changes.push([running, waiting]));
    const first = admitted(limiter.acquire('a'));
    const second = queued(limiter.acquire('a'));
    first.release();
    first.release(); // idempotent: must not free a second slot
    const slot = await second;
    expect(limiter.inFlight).toBe(1);
    expect(limiter.queued).toBe(0);
    slot.release();
    expect(limiter.inFlight).toBe(0);
    expect(changes.at(-1)).toEqual([0, 0]);
    expect(changes).toContainEqual([1, 1]);
  });

  it('refuses a waiting call after the longest wait, and frees its place', async () => {
    vi.useFakeTimers();
    const limiter = new RequestLimiter({ ...LIMITS, maxConcurrent: 1 });
    admitted(limiter.acquire('a'));
    const waiting = queued(limiter.acquire('a'));
    const outcome = waiting.then(
      () => 'granted',
      (error: unknown) => (error instanceof AdmissionRejected ? error.reason : 'other'),
    );
    await vi.advanceTimersByTimeAsync(49);
    expect(limiter.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(2);
    await expect(outcome).resolves.toBe('queue_timeout');
    expect(limiter.queued).toBe(0);
  });

  it('forgets a cancelled waiting call, so a freed slot is not given to a caller that left', () => {
    const limiter = new RequestLimiter({ ...LIMITS, maxConcurrent: 1 });
    const first = admitted(limiter.acquire('a'));
    const gone = limiter.acquire('a');
    if (gone.kind !== 'queued') throw new Error('expected a wait');
    gone.cancel();
    expect(limiter.queued).toBe(0);
    first.release();
    expect(limiter.inFlight).toBe(0);
  });

  it('gives freed slots to tenants in turn, not in arrival order', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxQueued: 10, maxQueueWaitMs: 1_000 });
    const grants: Array<{ tenant: string; slot: Slot }> = [];
    const wait = (tenant: string) => void queued(limiter.acquire(tenant)).then((slot) => grants.push({ tenant, slot }));
    const running = admitted(limiter.acquire('flood'));
    for (let i = 0; i < 5; i += 1) wait('flood');
    wait('quiet');
    running.release();
    for (let i = 0; i < 6; i += 1) {
      await settle();
      grants[i]?.slot.release();
    }
    await settle();
    // The quiet tenant's one call, queued behind five of the flood's, runs second, not sixth.
    expect(grants.map((g) => g.tenant)).toEqual(['flood', 'quiet', 'flood', 'flood', 'flood', 'flood']);
  });

  it('lets another tenant in when one tenant has filled the queue, refusing the flood\'s newest call instead', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxQueued: 3, maxQueueWaitMs: 1_000 });
    const grants: string[] = [];
    const outcomes: string[] = [];
    const wait = (tenant: string, name: string) =>
      void queued(limiter.acquire(tenant)).then(
        (slot) => {
          grants.push(name);
          slot.release();
        },
        (error: unknown) => outcomes.push(`${name}:${error instanceof AdmissionRejected ? error.reason : 'other'}`),
      );
    const running = admitted(limiter.acquire('flood'));
    wait('flood', 'f1');
    wait('flood', 'f2');
    wait('flood', 'f3');
    expect(limiter.acquire('flood')).toEqual({ kind: 'rejected', reason: 'queue_full' });
    wait('quiet', 'q1');
    await settle();
    expect(outcomes).toEqual(['f3:queue_full']);
    expect(limiter.queued).toBe(3);
    running.release();
    for (let i = 0; i < 4; i += 1) await settle();
    expect(grants).toEqual(['f1', 'q1', 'f2']);
  });

  it('keeps a lone tenant\'s full use of the server when nobody else waits', () => {
    const limiter = new RequestLimiter({ maxConcurrent: 4, maxQueued: 0, maxQueueWaitMs: 50 });
    for (let i = 0; i < 4; i += 1) admitted(limiter.acquire('only'));
    expect(limiter.inFlightOf('only')).toBe(4);
    expect(limiter.acquire('only').kind).toBe('rejected');
  });
});
