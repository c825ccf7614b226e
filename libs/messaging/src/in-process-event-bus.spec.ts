import { describe, expect, it, vi } from 'vitest';
import { TrellisError, deadLetterTopic } from '@trellis/contracts';
import type { events } from '@trellis/contracts';
import { InProcessEventBus } from './in-process-event-bus';

const ready = (documentId: string, chunkId: string): events.ChunkReady => ({
  context: { tenantId: 't', knowledgeBaseId: 'kb', documentId, documentVersion: 1, traceparent: '', knowledgeBase: undefined },
  chunkId,
  contentHash: 'h',
});

/**
 * Subscribes a handler that fails event "first" (transiently) its first `failures` times, starts
 * the bus and publishes "first" and "second" under one key; `handled` lists `chunk@attempt`.
 */
async function firstFailing(bus: InProcessEventBus, failures: number): Promise<{ handled: string[]; failed: () => number }> {
  const handled: string[] = [];
  let failed = 0;
  await bus.subscribe('chunk.ready', { group: 'g' }, async (e) => {
    if (e.payload.chunkId === 'first' && failed < failures) {
      failed++;
      throw TrellisError.unavailable('model busy');
    }
    handled.push(`${e.payload.chunkId}@${e.attempt}`);
  });
  await bus.start();
  await bus.publish('chunk.ready', 'doc', ready('doc', 'first'));
  await bus.publish('chunk.ready', 'doc', ready('doc', 'second'));
  return { handled, failed: () => failed };
}

describe('InProcessEventBus', () => {
  it('delivers events of one key in order, to every group', async () => {
    const bus = new InProcessEventBus({ concurrency: 4 });
    const seen: Record<string, string[]> = { a: [], b: [] };
    for (const group of ['a', 'b']) {
      await bus.subscribe('chunk.ready', { group }, async (e) => {
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        seen[group]!.push(`${e.key}:${e.payload.chunkId}`);
      });
    }
    await bus.start();
    for (let i = 0; i < 20; i++) for (const key of ['k1', 'k2', 'k3']) await bus.publish('chunk.ready', key, ready(key, String(i)));
    await bus.idle();
    for (const group of ['a', 'b']) {
      expect(seen[group]).toHaveLength(60);
      for (const key of ['k1', 'k2', 'k3']) {
        const order = seen[group]!.filter((s) => s.startsWith(`${key}:`)).map((s) => Number(s.split(':')[1]));
        expect(order).toEqual([...order].sort((x, y) => x - y));
      }
    }
  });

  it('retries a transient failure with backoff, holding back later events of the key', async () => {
    const bus = new InProcessEventBus({ retry: { baseDelayMs: 5, maxDelayMs: 20 } });
    const { handled } = await firstFailing(bus, 2);
    await bus.idle();
    expect(handled).toEqual(['first@3', 'second@1']);
    expect(await bus.deadLetters('chunk.ready')).toEqual([]);
  });

  it('dead-letters poison and exhausted events, keeps going, and replays', async () => {
    const bus = new InProcessEventBus({ retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 } });
    const handled: string[] = [];
    const deadLettered: string[] = [];
    let broken = true;
    await bus.subscribe(
      'chunk.ready',
      { group: 'g', onDeadLetter: async (e, error) => void deadLettered.push(`${e.payload.chunkId}: ${error.message}`) },
      async (e) => {
        if (e.payload.chunkId === 'poison') throw TrellisError.invalid('bad chunk');
        if (e.payload.chunkId === 'flaky' && broken) throw new Error('still broken');
        handled.push(e.payload.chunkId);
      },
    );
    await bus.start();
    await bus.publish('chunk.ready', 'd', ready('d', 'poison'));
    await bus.publish('chunk.ready', 'd', ready('d', 'flaky'));
    await bus.publish('chunk.ready', 'd', ready('d', 'fine'));
    bus.enqueueBytes('chunk.ready', 'd', Buffer.from([0xff, 0xff, 0xff]));
    await bus.idle();
    expect(handled).toEqual(['fine']);
    expect(deadLettered).toEqual(['poison: bad chunk', 'flaky: still broken']);
    const letters = await bus.deadLetters('chunk.ready');
    expect(letters.map((l) => l.attempts)).toEqual([1, 3, 1]);
    expect(deadLetterTopic('chunk.ready')).toBe('chunk.ready.dlq');

    broken = false;
    expect(await bus.replayDeadLetters('chunk.ready')).toBe(3);
    await bus.idle();
    expect(handled).toEqual(['fine', 'flaky']);
    expect((await bus.deadLetters('chunk.ready')).length).toBe(2);
  });

  it('reports per topic and group the events published and not yet handled', async () => {
    const bus = new InProcessEventBus({ concurrency: 4 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let fastHandled = 0;
    await bus.subscribe('chunk.ready', { group: 'fast' }, async () => {
      fastHandled++;
    });
    await bus.subscribe('chunk.ready', { group: 'slow' }, () => gate);
    await bus.subscribe('chunk.extracted', { group: 'idle' }, async () => undefined);
    for (let i = 0; i < 5; i++) await bus.publish('chunk.ready', `d${i}`, ready(`d${i}`, String(i)));
    const lag = async () => Object.fromEntries((await bus.consumerLag()).map((l) => [`${l.topic}/${l.group}`, l.messages]));
    expect(await lag()).toEqual({ 'chunk.ready/fast': 5, 'chunk.ready/slow': 5, 'chunk.extracted/idle': 0 });

    await bus.start();
    await vi.waitFor(() => expect(fastHandled).toBe(5));
    // The slow group holds its events (in flight or queued) until its handler returns.
    expect(await lag()).toEqual({ 'chunk.ready/fast': 0, 'chunk.ready/slow': 5, 'chunk.extracted/idle': 0 });
    release();
    await bus.idle();
    expect(await lag()).toEqual({ 'chunk.ready/fast': 0, 'chunk.ready/slow': 0, 'chunk.extracted/idle': 0 });
  });

  it('keeps every handler busy while any key has an event: a slow key holds only its own', async () => {
    const bus = new InProcessEventBus({ concurrency: 2 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    await bus.subscribe('chunk.ready', { group: 'g' }, async (e) => {
      if (e.payload.chunkId === 'slow') await gate;
      handled.push(e.payload.chunkId);
    });
    await bus.start();
    await bus.publish('chunk.ready', 'k0', ready('d', 'slow'));
    await bus.publish('chunk.ready', 'k0', ready('d', 'after-slow'));
    // With two key-hashed partitions about half of these would queue behind the slow one.
    for (let i = 1; i <= 20; i++) await bus.publish('chunk.ready', `k${i}`, ready('d', String(i)));
    await vi.waitFor(() => expect(handled).toHaveLength(20));
    expect(handled).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
    expect(await bus.consumerLag()).toEqual([{ topic: 'chunk.ready', group: 'g', messages: 2 }]);
    release();
    await bus.idle();
    expect(handled.slice(20)).toEqual(['slow', 'after-slow']);
  });

  it('never runs more handlers at once than its concurrency', async () => {
    const bus = new InProcessEventBus({ concurrency: 3 });
    let running = 0;
    let most = 0;
    await bus.subscribe('chunk.ready', { group: 'g' }, async () => {
      most = Math.max(most, ++running);
      await new Promise((r) => setTimeout(r, 2));
      running--;
    });
    await bus.start();
    for (let i = 0; i < 30; i++) await bus.publish('chunk.ready', `k${i % 10}`, ready('d', String(i)));
    await bus.idle();
    expect(most).toBe(3);
  });

  it('keeps an event whose retry the bus stopped before, first of its key, for the next start', async () => {
    const bus = new InProcessEventBus({ retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 } });
    const { handled, failed } = await firstFailing(bus, 1);
    await vi.waitFor(() => expect(failed()).toBe(1));
    await bus.stop();
    expect(await bus.consumerLag()).toEqual([{ topic: 'chunk.ready', group: 'g', messages: 2 }]);
    await bus.start();
    await bus.idle();
    expect(handled).toEqual(['first@2', 'second@1']);
  });
});
