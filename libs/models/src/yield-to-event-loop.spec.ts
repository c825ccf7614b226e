import { describe, expect, it } from 'vitest';
import { yieldToEventLoop } from './yield-to-event-loop';

describe('yieldToEventLoop', () => {
  it('lets the callbacks already queued on the event loop run before it resolves', async () => {
    const ran: string[] = [];
    setImmediate(() => ran.push('queued before'));
    const yielded = yieldToEventLoop().then(() => ran.push('yielded'));
    // A resolved promise (a microtask) would come back before the event loop turned.
    await Promise.resolve();
    expect(ran).toEqual([]);
    await yielded;
    expect(ran).toEqual(['queued before', 'yielded']);
  });
});
