import { KafkaJSNonRetriableError } from 'kafkajs';
import type { Admin } from 'kafkajs';
import { afterAll, afterEach, expect, it, vi } from 'vitest';
import type { EventEnvelope } from '../src/event-bus';
import { KafkaEventBus } from '../src/kafka';
import type { ConsumerCrash, KafkaBusConfig } from '../src/kafka';
import { resolveKafkaBusConfig } from '../src/kafka/kafka-bus.config';
import { createKafkaClient } from '../src/kafka/kafka-client';
import { EventDelivery } from '../src/kafka/event-delivery';
import type { DeliveryOutcome, KafkaSubscription, RawEvent } from '../src/kafka/event-delivery';
import { KafkaGroupConsumer } from '../src/kafka/kafka-group-consumer';
import type { DeliveryControl } from '../src/kafka/keep-alive';
import { KafkaNames } from '../src/kafka/kafka-names';
import { deleteTestTopicsAndGroups, describeOnBroker, ingested, testBusConfig, uniquePrefix } from './kafka-test-kit';

const TOPIC = 'document.ingested' as const;
const WAIT = { timeout: 30_000, interval: 50 };

/** Real delivery, except that the n-th event makes the batch loop throw an error kafkajs will not restart after. */
class DeliveryFailingAt extends EventDelivery {
  private delivered = 0;

  constructor(private readonly failAt: number) {
    super({
      retry: { maxAttempts: 3, baseDelayMs: 50, maxDelayMs: 500 },
      heartbeatIntervalMs: 500,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
      writeDeadLetter: () => Promise.reject(new Error('no dead letters in this test')),
    });
  }

  override async deliver(subscription: KafkaSubscription, event: RawEvent, control: DeliveryControl): Promise<DeliveryOutcome> {
    if (++this.delivered === this.failAt) throw new KafkaJSNonRetriableError('injected non-retriable failure');
    return super.deliver(subscription, event, control);
  }
}

function readiness(group: KafkaGroupConsumer): string {
  try {
    group.assertRunning();
    return 'ready';
  } catch (error) {
    return (error as { code: string }).code;
  }
}

describeOnBroker('KafkaGroupConsumer after a crash kafkajs does not restart from', () => {
  const stoppable: Array<{ stop(): Promise<void> }> = [];
  let admin: Admin | undefined;

  afterEach(async () => {
    await Promise.all(stoppable.splice(0).map((s) => s.stop()));
  });

  afterAll(async () => {
    await admin?.disconnect();
    await deleteTestTopicsAndGroups();
  });

  /** Topics of the test's own with `count` events of one key on them, and a group consumer over them. */
  async function consumerOverPublished(test: string, count: number, overrides: Partial<KafkaBusConfig>) {
    const prefix = uniquePrefix(test);
    const publisher = new KafkaEventBus(testBusConfig(prefix));
    stoppable.push(publisher);
    await publisher.ensureTopics();
    for (let n = 0; n < count; n++) await publisher.publish(TOPIC, 'doc-a', ingested('doc-a', String(n)));
    const config = resolveKafkaBusConfig(testBusConfig(prefix, overrides));
    const kafka = createKafkaClient(config);
    admin ??= kafka.admin();
    const names = new KafkaNames(prefix);
    const group = new KafkaGroupConsumer('restart', { kafka, names, config, delivery: new DeliveryFailingAt(4) });
    stoppable.push(group);
    const handled: number[] = [];
    group.add({
      topic: TOPIC,
      options: { group: 'restart' },
      handler: async (event: EventEnvelope<typeof TOPIC>) => {
        handled.push(Number(event.payload.contentHash));
      },
    } as unknown as KafkaSubscription);
    return { group, handled, groupId: names.group('restart') };
  }

  it('starts a new consumer, reports the group down until it runs, and handles every event once', async () => {
    const crashes: Array<ConsumerCrash & { ready: string }> = [];
    // Records what readiness sees at the moment of the crash (setup is assigned before the consumer starts).
    const onConsumerCrash = (crash: ConsumerCrash) => crashes.push({ ...crash, ready: readiness(setup.group) });
    const setup = await consumerOverPublished('restart', 10, { onConsumerCrash });
    await setup.group.start();

    await vi.waitFor(() => expect(setup.handled).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), WAIT);
    expect(crashes).toEqual([{ group: 'restart', error: 'injected non-retriable failure', restartedBy: 'bus', ready: 'UNAVAILABLE' }]);
    // The new consumer joined its group: ready again.
    expect(readiness(setup.group)).toBe('ready');
  });

  it('starts nothing once stopped during the backoff', async () => {
    const crashed = vi.fn();
    // A restart 2-4 s after the crash, so that stop() lands before it.
    const setup = await consumerOverPublished('restart-stop', 6, { onConsumerCrash: crashed, retry: { baseDelayMs: 4_000, maxDelayMs: 4_000 } });
    await setup.group.start();
    await vi.waitFor(() => expect(crashed).toHaveBeenCalledOnce(), WAIT);
    await setup.group.stop();

    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const [described] = (await admin!.describeGroups([setup.groupId])).groups;
    expect(described?.members).toEqual([]);
    expect(setup.handled).toEqual([0, 1, 2]);
  });
});
