import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboxEvent, TopicName, TopicPayload, events } from '@trellis/contracts';
import { SqliteStore } from '@trellis/storage';
import { EventOutbox, OUTBOX_RELAY_LEASE, outboxEvent } from '../src/outbox/event-outbox';
import type { OutboxOptions, OutboxTelemetry } from '../src/outbox/event-outbox';

/** A bus whose broker can be down, or slow, and that records what it took. */
class ControlledBus {
  readonly taken: Array<{ topic: TopicName; key: string; chunkId: string; headers: Record<string, string> }> = [];
  down = false;
  /** Keys whose publish fails even when the broker is up. */
  readonly refused = new Set<string>();
  hold: Promise<void> | undefined;

  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers: Record<string, string> = {}): Promise<void> {
    await this.hold;
    if (this.down || this.refused.has(key)) throw new Error('broker unavailable');
    this.taken.push({ topic, key, chunkId: (payload as events.ChunkReady).chunkId, headers });
  }
}

class RecordingTelemetry implements OutboxTelemetry {
  readonly counts = { stage: 0, relay: 0, failed: 0, failedByRelay: 0, undeleted: 0 };
  lastWaiting = -1;
  published(by: 'stage' | 'relay', count: number): void {
    this.counts[by] += count;
  }
  failed(by: 'stage' | 'relay', count: number): void {
    if (by === 'stage') this.counts.failed += count;
    else this.counts.failedByRelay += count;
  }
  undeleted(count: number): void {
    this.counts.undeleted += count;
  }
  waiting(count: number): void {
    this.lastWaiting = count;
  }
}

const ready = (key: string, chunkId: string): OutboxEvent =>
  outboxEvent('chunk.ready', key, { context: undefined, chunkId, contentHash: `h-${chunkId}` }, { tenantId: 't', kbId: 'kb' });

describe('EventOutbox over a real store', () => {
  let store: SqliteStore;
  let bus: ControlledBus;
  let telemetry: RecordingTelemetry;
  let now: number;
  const outbox = (options: Partial<OutboxOptions> = {}) =>
    new EventOutbox(bus, store.repositories.outbox, store.repositories.llmBudget, { publishTimeoutMs: 2_000, relayAfterMs: 5_000, batchSize: 2, leaseMs: 60_000, ...options }, telemetry, () => now);

  /** What a stage does: its change and its events in one transaction (here, events alone). */
  async function commit(...committed: OutboxEvent[]): Promise<OutboxEvent[]> {
    await store.repositories.outbox.appendOutboxEvents(committed);
    return committed;
  }

  beforeEach(() => {
    store = new SqliteStore(':memory:');
    bus = new ControlledBus();
    telemetry = new RecordingTelemetry();
    now = Date.now();
  });

  afterEach(async () => {
    await store.close();
  });

  it('publishes committed events in order, with their payload and headers, and deletes them', async () => {
    const events = await commit(ready('doc-1', 'c1'), ready('doc-1', 'c2'), ready('doc-2', 'c3'));
    await outbox().publishCommitted(events);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c1', 'c2', 'c3']);
    expect(bus.taken[0]).toMatchObject({ topic: 'chunk.ready', key: 'doc-1', headers: { 'trellis-tenant': 't' } });
    expect(await store.repositories.outbox.countOutboxEvents()).toBe(0);
    expect(telemetry.counts).toMatchObject({ stage: 3, failed: 0 });
  });

  it('never throws when the broker is down: the events stay for the relay, which publishes them once it is back', async () => {
    const events = await commit(ready('doc-1', 'c1'), ready('doc-2', 'c2'), ready('doc-2', 'c3'));
    bus.down = true;
    await outbox().publishCommitted(events);
    expect(await store.repositories.outbox.countOutboxEvents()).toBe(3);
    expect(telemetry.counts.failed).toBe(3);

    // Not before they are relayAfterMs old: the stage that wrote them may still be publishing.
    bus.down = false;
    expect(await outbox().relayOnce()).toBe(0);
    expect(bus.taken).toEqual([]);
    expect(telemetry.lastWaiting).toBe(0);
    now += 6_000;
    // Overdue now; with the broker still down the relay publishes nothing and reports them.
    bus.down = true;
    expect(await outbox().relayOnce()).toBe(0);
    expect(telemetry.lastWaiting).toBe(3);
    // The stage's failures and the relay's are told apart: the relay tried its first batch of two.
    expect(telemetry.counts).toMatchObject({ failed: 3, failedByRelay: 2 });
    bus.down = false;
    // Batches of two: the relay goes on until none is left.
    expect(await outbox().relayOnce()).toBe(3);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c1', 'c2', 'c3']);
    expect(await store.repositories.outbox.countOutboxEvents()).toBe(0);
    expect(telemetry.counts.relay).toBe(3);
    expect(telemetry.lastWaiting).toBe(0);
  });

  it('keeps the order of one key: after a failure the rest of that key waits, other keys go', async () => {
    const events = await commit(ready('doc-1', 'c1'), ready('doc-2', 'c2'), ready('doc-1', 'c3'));
    bus.refused.add('doc-1');
    await outbox().publishCommitted(events);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c2']);
    expect((await store.repositories.outbox.listOutboxEvents(new Date(now + 60_000).toISOString(), 10)).map((e) => e.key)).toEqual(['doc-1', 'doc-1']);

    bus.refused.clear();
    now += 6_000;
    expect(await outbox().relayOnce()).toBe(2);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c2', 'c1', 'c3']);
  });

  it('ends a relay pass after three keys failed: an unreachable broker is not tried once per document', async () => {
    await commit(...Array.from({ length: 8 }, (_, i) => ready(`doc-${i}`, `c${i}`)));
    bus.down = true;
    now += 6_000;
    const calls: string[] = [];
    const publish = bus.publish.bind(bus);
    bus.publish = (async (topic, key, payload, headers) => {
      calls.push(key);
      return publish(topic, key, payload, headers);
    }) as typeof bus.publish;
    expect(await outbox({ batchSize: 100 }).relayOnce()).toBe(0);
    expect(calls).toEqual(['doc-0', 'doc-1', 'doc-2']);
    expect(telemetry.lastWaiting).toBe(8);
  });

  it('waits for a slow broker no longer than the publish timeout, and deletes the events once it takes them', async () => {
    let release!: () => void;
    bus.hold = new Promise((resolve) => (release = resolve));
    const events = await commit(ready('doc-1', 'c1'));
    const started = Date.now();
    await outbox({ publishTimeoutMs: 150 }).publishCommitted(events);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(await store.repositories.outbox.countOutboxEvents()).toBe(1);

    release();
    await expect.poll(() => store.repositories.outbox.countOutboxEvents()).toBe(0);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c1']);
  });

  it('relays in one process at a time: another holder of the lease means no pass', async () => {
    await commit(ready('doc-1', 'c1'));
    now += 6_000;
    expect(await store.repositories.llmBudget.acquireLease(OUTBOX_RELAY_LEASE, 'another-process', 1, now + 60_000, now)).toBe(true);
    expect(await outbox().relayOnce()).toBeNull();
    expect(bus.taken).toEqual([]);

    await store.repositories.llmBudget.releaseLease(OUTBOX_RELAY_LEASE, 'another-process');
    expect(await outbox().relayOnce()).toBe(1);
  });

  it('announces stored work through the outbox: appended, published, deleted', async () => {
    await outbox().announce([ready('doc-9', 'c9')]);
    expect(bus.taken.map((e) => e.chunkId)).toEqual(['c9']);
    expect(await store.repositories.outbox.countOutboxEvents()).toBe(0);

    bus.down = true;
    await outbox().announce([ready('doc-9', 'c10')]);
    expect((await store.repositories.outbox.listOutboxEvents(new Date(now + 60_000).toISOString(), 10)).map((e) => e.key)).toEqual(['doc-9']);
  });
});
