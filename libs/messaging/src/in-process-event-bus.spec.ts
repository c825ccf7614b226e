import { describe, expect, it, vi } from 'vitest';
import { TrellisError, deadLetterTopic } from '@trellis/contracts';
import type { events } from '@trellis/contracts';
import { InProcessEventBus, partitionOf } from './in-process-event-bus';

const ready = (documentId: string, chunkId: string): events.ChunkReady => ({
  context: { tenantId: 't', knowledgeBaseId: 'kb', documentId, documentVersion: 1, traceparent: '', knowledgeBase: undefined },
  chunkId,
  contentHash: 'h',
});

describe('InProcessEventBus', () => {
  it('delivers events of one key in order, to every group', async () => {
    const bus = new InProcessEventBus({ partitions: 4 });
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
    const handled: string[] = [];
    let failures = 2;
    await bus.subscribe('chunk.ready', { group: 'g' }, async (e) => {
      if (e.payload.chunkId === 'first' && failures-- > 0) throw TrellisError.unavailable('model busy');
      handled.push(`${e.payload.chunkId}@${e.attempt}`);
    });
    await bus.start();
    await bus.publish('chunk.ready', 'doc', ready('doc', 'first'));
    await bus.publish('chunk.ready', 'doc', ready('doc', 'second'));
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
    const bus = new InProcessEventBus({ partitions: 4 });
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

  it('maps a key to the same partition every time', () => {
    expect(partitionOf('doc_1', 8)).toBe(partitionOf('doc_1', 8));
    expect(new Set(Array.from({ length: 100 }, (_, i) => partitionOf(`doc_${i}`, 8))).size).toBe(8);
  });
});
