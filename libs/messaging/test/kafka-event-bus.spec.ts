import { once } from 'node:events';
import { ALL_TOPICS, TrellisError } from '@trellis/contracts';
import { Kafka, Partitioners, logLevel } from 'kafkajs';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { KafkaEventBus, ensureKafkaTopics } from '../src/kafka';
import type { KafkaBusConfig } from '../src/kafka';
import { FAST_CONSUMER, TEST_BROKERS, deleteTestTopicsAndGroups, describeOnBroker, ingested, spawnCrashingConsumer, testBusConfig, uniquePrefix } from './kafka-test-kit';

const TOPIC = 'document.ingested';
const WAIT = { timeout: 30_000, interval: 50 };

describeOnBroker('KafkaEventBus on a real broker', () => {
  const buses: KafkaEventBus[] = [];

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.stop()));
  });

  afterAll(async () => {
    await deleteTestTopicsAndGroups();
  });

  function newBus(topicPrefix: string, overrides: Partial<KafkaBusConfig> = {}): KafkaEventBus {
    const bus = new KafkaEventBus(testBusConfig(topicPrefix, overrides));
    buses.push(bus);
    return bus;
  }

  /** A bus on topics of the test's own, created up front as the Helm Job does. */
  async function busOnFreshTopics(test: string, overrides: Partial<KafkaBusConfig> = {}): Promise<{ prefix: string; bus: KafkaEventBus }> {
    const prefix = uniquePrefix(test);
    const bus = newBus(prefix, overrides);
    const created = await bus.ensureTopics();
    expect(created).toContain(`${prefix}${TOPIC}.dlq`);
    return { prefix, bus };
  }

  it('hands each key its events in the order they were published', async () => {
    const { bus } = await busOnFreshTopics('order', { partitionsConsumedConcurrently: 3 });
    const keys = ['doc-a', 'doc-b', 'doc-c'];
    const seen = new Map<string, number[]>(keys.map((key) => [key, []]));
    await bus.subscribe(TOPIC, { group: 'order' }, async (event) => {
      // Uneven handling times, so that partitions handled concurrently interleave.
      if (Math.random() < 0.2) await new Promise((r) => setTimeout(r, 5));
      seen.get(event.key)?.push(Number(event.payload.contentHash));
    });
    await bus.start();

    await Promise.all(
      keys.map(async (key) => {
        for (let n = 0; n < 30; n++) await bus.publish(TOPIC, key, ingested(key, String(n)));
      }),
    );

    const inOrder = Array.from({ length: 30 }, (_, n) => n);
    await vi.waitFor(() => {
      for (const key of keys) expect(seen.get(key)).toEqual(inOrder);
    }, WAIT);
  });

  it.each([
    { configured: 4, subscription: undefined, most: 4 },
    // A subscription whose handlers mostly wait asks for more than the configured number.
    { configured: 2, subscription: 6, most: 6 },
  ])('handles the events of distinct keys on one partition side by side, each key in order ($configured configured, $subscription asked)', async ({ configured, subscription, most: expectedMost }) => {
    const { bus } = await busOnFreshTopics(`keys-${configured}`, { partitions: 1, eventsPerPartition: configured });
    const keys = Array.from({ length: 8 }, (_, i) => `chunk-${i}`);
    const seen = new Map<string, number[]>(keys.map((key) => [key, []]));
    const running = new Set<string>();
    let most = 0;
    let sameKeyAtOnce = false;
    await bus.subscribe(TOPIC, { group: 'keys', eventsPerPartition: subscription }, async (event) => {
      sameKeyAtOnce ||= running.has(event.key);
      running.add(event.key);
      most = Math.max(most, running.size);
      await new Promise((r) => setTimeout(r, 20));
      running.delete(event.key);
      seen.get(event.key)?.push(Number(event.payload.contentHash));
    });
    // Published before the consumer starts, so its first batch holds all of them.
    for (let n = 0; n < 5; n++) for (const key of keys) await bus.publish(TOPIC, key, ingested(key, String(n)));
    await bus.start();

    await vi.waitFor(() => {
      for (const key of keys) expect(seen.get(key)).toEqual([0, 1, 2, 3, 4]);
    }, WAIT);
    // One partition held that many events at once, never two of one key.
    expect(most).toBe(expectedMost);
    expect(sameKeyAtOnce).toBe(false);
  });

  it('redelivers to another consumer of the group every event a crashed consumer had not committed', async () => {
    const { prefix, bus: publisher } = await busOnFreshTopics('crash');
    const published: string[] = [];
    await Promise.all(
      ['doc-a', 'doc-b', 'doc-c'].map(async (key) => {
        for (let n = 0; n < 6; n++) {
          await publisher.publish(TOPIC, key, ingested(key, `${key}/${n}`));
          published.push(`${key}/${n}`);
        }
      }),
    );

    // Consumer A handles events until it reaches doc-b/2, whose handler never ends; then it is killed.
    const stuckOn = 'doc-b/2';
    const consumerA = spawnCrashingConsumer({ brokers: TEST_BROKERS, topicPrefix: prefix, group: 'crash', stuckOn, consumer: FAST_CONSUMER });
    const startedByA: string[] = [];
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`consumer A did not reach ${stuckOn}`)), 30_000);
        consumerA.on('message', (message: { handling: string }) => {
          startedByA.push(message.handling);
          if (message.handling === stuckOn) resolve();
        });
        consumerA.once('exit', (code) => reject(new Error(`consumer A exited (${code}) before reaching ${stuckOn}`)));
        consumerA.once('exit', () => clearTimeout(timer));
      });
    } finally {
      consumerA.kill('SIGKILL');
      if (consumerA.exitCode === null && consumerA.signalCode === null) await once(consumerA, 'exit');
    }
    // Offsets are committed one by one before the next event starts, so A committed exactly these.
    const committedByA = startedByA.filter((label) => label !== stuckOn);
    expect(committedByA).toEqual(expect.arrayContaining(['doc-b/0', 'doc-b/1']));

    const consumerB = newBus(prefix);
    const handledByB: string[] = [];
    await consumerB.subscribe(TOPIC, { group: 'crash' }, async (event) => {
      handledByB.push(event.payload.contentHash);
    });
    await consumerB.start();

    const uncommitted = published.filter((label) => !committedByA.includes(label));
    await vi.waitFor(() => expect(new Set(handledByB)).toEqual(new Set(uncommitted)), WAIT);
    expect(handledByB).toContain(stuckOn);
    expect(handledByB).toHaveLength(uncommitted.length);
    const bKeyOrder = handledByB.filter((label) => label.startsWith('doc-b/'));
    expect(bKeyOrder).toEqual([...bKeyOrder].sort());
  });

  it('dead-letters a malformed payload and a rejected event, and goes on with the next events', async () => {
    const { prefix, bus } = await busOnFreshTopics('poison');
    const handled: string[] = [];
    const hooked: string[] = [];
    await bus.subscribe(
      TOPIC,
      { group: 'poison', onDeadLetter: async (event) => void hooked.push(event.payload.contentHash) },
      async (event) => {
        if (event.payload.contentHash === 'bad') throw TrellisError.invalid('bad is not a document');
        handled.push(event.payload.contentHash);
      },
    );
    await bus.start();

    const malformed = Buffer.from('not a protobuf');
    const raw = new Kafka({ brokers: TEST_BROKERS, clientId: 'raw-producer', logLevel: logLevel.NOTHING }).producer({
      createPartitioner: Partitioners.DefaultPartitioner,
    });
    await raw.connect();
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'good-1'));
    await raw.send({ topic: `${prefix}${TOPIC}`, messages: [{ key: 'doc-1', value: malformed, headers: { 'x-origin': 'raw' } }] });
    await raw.disconnect();
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'bad'));
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'good-2'));
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'good-3'));

    await vi.waitFor(() => expect(handled).toEqual(['good-1', 'good-2', 'good-3']), WAIT);
    const [undecodable, rejected, ...others] = await bus.deadLetters(TOPIC);
    expect(others).toEqual([]);
    expect(undecodable).toMatchObject({ topic: TOPIC, key: 'doc-1', group: 'poison', attempts: 1, headers: { 'x-origin': 'raw' } });
    expect(undecodable?.error).toMatch(/^undecodable payload/);
    expect(Buffer.from(undecodable?.payload ?? [])).toEqual(malformed);
    expect(rejected).toMatchObject({ topic: TOPIC, key: 'doc-1', group: 'poison', attempts: 1, error: 'bad is not a document' });
    expect(rejected?.headers['trellis-schema-version']).toBe('1');
    expect(rejected?.headers['trellis-error']).toBeUndefined();
    expect(Number.isNaN(Date.parse(rejected?.failedAt ?? ''))).toBe(false);
    // The hook needs a decoded event: the malformed payload has none.
    expect(hooked).toEqual(['bad']);
  });

  it('retries a transient failure with backoff, holding back the key’s later events, then succeeds', async () => {
    const { bus } = await busOnFreshTopics('transient', { retry: { baseDelayMs: 100, maxDelayMs: 1_000, maxAttempts: 5 } });
    const calls: Array<{ label: string; attempt: number; at: number }> = [];
    await bus.subscribe(TOPIC, { group: 'transient' }, async (event) => {
      calls.push({ label: event.payload.contentHash, attempt: event.attempt, at: Date.now() });
      if (event.payload.contentHash === 'flaky' && event.attempt < 3) throw TrellisError.unavailable('store is down');
    });
    await bus.start();

    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'flaky'));
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'next'));

    await vi.waitFor(() => expect(calls.map((c) => c.label)).toContain('next'), WAIT);
    expect(calls.map((c) => `${c.label}#${c.attempt}`)).toEqual(['flaky#1', 'flaky#2', 'flaky#3', 'next#1']);
    // Full-jitter backoff waits at least half its ceiling: 50 ms after attempt 1, 100 ms after attempt 2.
    const [first, , third] = calls;
    expect((third?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(140);
    expect(await bus.deadLetters(TOPIC)).toEqual([]);
  });

  it('replays a dead letter once its handler is fixed, and never twice', async () => {
    const { bus } = await busOnFreshTopics('replay');
    let fixed = false;
    const handled: string[] = [];
    const replayedHeaders: Array<Readonly<Record<string, string>>> = [];
    const deadLettered: string[] = [];
    await bus.subscribe(
      TOPIC,
      { group: 'replay', onDeadLetter: async (event) => void deadLettered.push(event.payload.contentHash) },
      async (event) => {
        if (event.payload.contentHash === 'bad') {
          if (!fixed) throw TrellisError.invalid('cannot handle bad yet');
          replayedHeaders.push(event.headers);
        }
        handled.push(event.payload.contentHash);
      },
    );
    await bus.start();
    for (const label of ['good-1', 'bad', 'good-2']) await bus.publish(TOPIC, 'doc-1', ingested('doc-1', label));
    await vi.waitFor(() => expect(deadLettered).toEqual(['bad']), WAIT);
    expect(await bus.deadLetters(TOPIC)).toHaveLength(1);

    fixed = true;
    expect(await bus.replayDeadLetters(TOPIC)).toBe(1);
    await vi.waitFor(() => expect(handled).toEqual(['good-1', 'good-2', 'bad']), WAIT);
    expect(replayedHeaders[0]?.['trellis-error']).toBeUndefined();
    expect(replayedHeaders[0]?.['trellis-schema-version']).toBe('1');

    expect(await bus.replayDeadLetters(TOPIC)).toBe(0);
    expect(await bus.deadLetters(TOPIC)).toEqual([]);
    expect(handled).toEqual(['good-1', 'good-2', 'bad']);
  });

  it('stops gracefully: the event in flight is finished and committed, the rest is left to the group', async () => {
    const { prefix, bus } = await busOnFreshTopics('graceful');
    const finished: string[] = [];
    let slowStarted = false;
    await bus.subscribe(TOPIC, { group: 'graceful' }, async (event) => {
      if (event.payload.contentHash === 'slow') {
        slowStarted = true;
        await new Promise((r) => setTimeout(r, 500));
      }
      finished.push(event.payload.contentHash);
    });
    await bus.start();
    for (const label of ['slow', 'later-1', 'later-2']) await bus.publish(TOPIC, 'doc-1', ingested('doc-1', label));
    await vi.waitFor(() => expect(slowStarted).toBe(true), WAIT);

    await bus.stop();
    expect(finished).toEqual(['slow']);
    await expect(bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'too-late'))).rejects.toThrow(/stopped/);

    const next = newBus(prefix);
    const handledNext: string[] = [];
    await next.subscribe(TOPIC, { group: 'graceful' }, async (event) => void handledNext.push(event.payload.contentHash));
    await next.start();
    await vi.waitFor(() => expect(handledNext).toEqual(['later-1', 'later-2']), WAIT);
  });

  it('runs one consumer per group, however many topics the group subscribes', async () => {
    const { prefix, bus } = await busOnFreshTopics('shared');
    const handled: string[] = [];
    await bus.subscribe(TOPIC, { group: 'shared' }, async (event) => void handled.push(`${event.topic}:${event.payload.contentHash}`));
    await bus.subscribe('chunk.ready', { group: 'shared' }, async (event) => void handled.push(`${event.topic}:${event.payload.chunkId}`));
    await expect(bus.subscribe(TOPIC, { group: 'shared' }, async () => undefined)).rejects.toThrow(/already subscribes/);
    await bus.start();
    await bus.publish(TOPIC, 'doc-1', ingested('doc-1', 'd'));
    await bus.publish('chunk.ready', 'doc-1', { context: undefined, chunkId: 'c', contentHash: 'h' });
    await vi.waitFor(() => expect(handled.sort()).toEqual(['chunk.ready:c', 'document.ingested:d']), WAIT);

    const admin = new Kafka({ brokers: TEST_BROKERS, clientId: 'group-inspector', logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const { groups } = await admin.describeGroups([`${prefix}shared`]);
      expect(groups[0]?.members).toHaveLength(1);
    } finally {
      await admin.disconnect();
    }
  });

  it('creates each topic and its dead-letter topic once (what `trellis topics ensure` runs), and answers ping', async () => {
    const config = testBusConfig(uniquePrefix('ensure'));
    const created = await ensureKafkaTopics(config);
    expect(created).toHaveLength(2 * ALL_TOPICS.length);
    expect(created).toContain(`${config.topicPrefix}chunk.extracted.dlq`);
    expect(await ensureKafkaTopics(config)).toEqual([]);
    await expect(newBus(config.topicPrefix ?? '').ping()).resolves.toBeUndefined();
  });
});
