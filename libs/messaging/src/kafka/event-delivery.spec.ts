import { ErrorCode, TrellisError, events } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import { describe, expect, it, vi } from 'vitest';
import type { EventEnvelope, EventHandler } from '../event-bus';
import { EventDelivery } from './event-delivery';
import type { KafkaSubscription, RawEvent } from './event-delivery';
import type { DeadLetterFailure } from './kafka-headers';
import type { DeliveryControl } from './keep-alive';

const payload = { context: undefined, contentHash: 'h-1' };
const event: RawEvent = { key: 'doc-1', value: Buffer.from(events.DocumentIngested.encode(payload).finish()), headers: { traceparent: 'tp' } };

function setUp(handler: EventHandler<'document.ingested'>, options: { maxAttempts?: number; control?: Partial<DeliveryControl> } = {}) {
  const deadLetters: Array<{ event: RawEvent; failure: DeadLetterFailure }> = [];
  const hooked: Array<{ attempt: number; error: string }> = [];
  const delivery = new EventDelivery({
    retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
    heartbeatIntervalMs: 1_000,
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    writeDeadLetter: async (e, failure) => void deadLetters.push({ event: e, failure }),
  });
  const subscription = {
    topic: 'document.ingested',
    options: {
      group: 'chunking',
      maxAttempts: options.maxAttempts,
      onDeadLetter: async (e: EventEnvelope<TopicName>, error: Error) => void hooked.push({ attempt: e.attempt, error: error.message }),
    },
    handler,
  } as unknown as KafkaSubscription;
  const control: DeliveryControl = { heartbeat: async () => undefined, shouldAbandon: () => false, ...options.control };
  return { deliver: (e: RawEvent = event) => delivery.deliver(subscription, e, control), deadLetters, hooked };
}

describe('EventDelivery', () => {
  it('hands the decoded event to the handler', async () => {
    const handler = vi.fn(async () => undefined);
    const { deliver, deadLetters } = setUp(handler);
    expect(await deliver()).toBe('handled');
    expect(handler).toHaveBeenCalledWith({ topic: 'document.ingested', key: 'doc-1', payload, headers: { traceparent: 'tp' }, attempt: 1 });
    expect(deadLetters).toEqual([]);
  });

  it('retries a failing handler and succeeds', async () => {
    const handler = vi.fn(async (e: EventEnvelope<'document.ingested'>) => {
      if (e.attempt < 3) throw TrellisError.unavailable('down');
    });
    const { deliver, deadLetters } = setUp(handler);
    expect(await deliver()).toBe('handled');
    expect(handler).toHaveBeenCalledTimes(3);
    expect(deadLetters).toEqual([]);
  });

  it('dead-letters after maxAttempts, with the attempts and the error', async () => {
    const { deliver, deadLetters, hooked } = setUp(async () => Promise.reject(new Error('boom')), { maxAttempts: 2 });
    expect(await deliver()).toBe('dead-lettered');
    expect(deadLetters).toHaveLength(1);
    expect(deadLetters[0]?.event).toBe(event);
    expect(deadLetters[0]?.failure).toMatchObject({ sourceTopic: 'document.ingested', group: 'chunking', error: 'boom', attempts: 2 });
    expect(hooked).toEqual([{ attempt: 2, error: 'boom' }]);
  });

  it('dead-letters poison at once', async () => {
    const handler = vi.fn(async () => Promise.reject(new TrellisError(ErrorCode.FailedPrecondition, 'deleted')));
    const { deliver, deadLetters } = setUp(handler);
    expect(await deliver()).toBe('dead-lettered');
    expect(handler).toHaveBeenCalledTimes(1);
    expect(deadLetters[0]?.failure.attempts).toBe(1);
  });

  it('dead-letters a payload that does not decode, and a record without value, without calling the handler or the hook', async () => {
    const handler = vi.fn(async () => undefined);
    const { deliver, deadLetters, hooked } = setUp(handler);
    expect(await deliver({ ...event, value: Buffer.from('not a protobuf') })).toBe('dead-lettered');
    expect(await deliver({ ...event, value: null })).toBe('dead-lettered');
    expect(handler).not.toHaveBeenCalled();
    expect(hooked).toEqual([]);
    expect(deadLetters.map((d) => d.failure.error)).toEqual([expect.stringMatching(/^undecodable payload/), 'undecodable payload: record has no value']);
  });

  it('gives up retrying, dead-lettering nothing, when the bus stops during a backoff', async () => {
    const handler = vi.fn(async () => Promise.reject(TrellisError.unavailable('down')));
    const { deliver, deadLetters } = setUp(handler, { control: { shouldAbandon: () => handler.mock.calls.length > 0 } });
    expect(await deliver()).toBe('abandoned');
    expect(handler).toHaveBeenCalledTimes(1);
    expect(deadLetters).toEqual([]);
  });

  it('heartbeats while waiting to retry, and lets a failed heartbeat (a rebalance) end the delivery', async () => {
    const heartbeat = vi.fn(async () => Promise.reject(new Error('REBALANCE_IN_PROGRESS')));
    const { deliver } = setUp(async () => Promise.reject(TrellisError.unavailable('down')), { control: { heartbeat } });
    await expect(deliver()).rejects.toThrow('REBALANCE_IN_PROGRESS');
    expect(heartbeat).toHaveBeenCalled();
  });
});
