import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_HEADER } from '@trellis/wire';
import { AdmissionGate } from './admission-gate';
import { RequestLimiter } from './request-limiter';

describe('AdmissionGate', () => {
  it('spreads the retry-after of refusals ±25 % around the back-off, so refused callers do not return together', () => {
    const gate = new AdmissionGate(new RequestLimiter({ maxConcurrent: 1, maxQueued: 0, maxQueueWaitMs: 50 }));
    const waits = Array.from({ length: 50 }, () => {
      const refusal = gate.refusal('queue_full');
      expect(refusal.code).toBe(status.RESOURCE_EXHAUSTED);
      const retryAfter = Number(refusal.metadata.get(RETRY_AFTER_HEADER)[0]);
      expect(refusal.details).toBe(`server overloaded (queue_full): 1 calls are running and 0 waiting; retry after ${retryAfter} ms`);
      return retryAfter;
    });
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...waits)).toBeLessThanOrEqual(250);
    expect(new Set(waits).size).toBeGreaterThan(5);
  });

  it('refuses at once past the limit, and runs a queued call when a slot frees', async () => {
    const gate = new AdmissionGate(new RequestLimiter({ maxConcurrent: 1, maxQueued: 1, maxQueueWaitMs: 1_000 }));
    const events: string[] = [];
    let first: { release(): void } | undefined;
    gate.enter('t', (slot) => ((first = slot), events.push('first runs')), () => events.push('first refused'));
    gate.enter('t', () => events.push('second runs'), () => events.push('second refused'));
    gate.enter('t', () => events.push('third runs'), (r) => events.push(`third refused (${r.reason})`));
    expect(events).toEqual(['first runs', 'third refused (queue_full)']);
    first?.release();
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['first runs', 'third refused (queue_full)', 'second runs']);
  });
});
