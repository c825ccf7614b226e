import { afterAll, afterEach, expect, it, vi } from 'vitest';
import { TrellisMetrics } from '@trellis/observability';
import { KafkaEventBus } from '../src/kafka';
import { deleteTestTopicsAndGroups, describeOnBroker, ingested, testBusConfig, uniquePrefix } from './kafka-test-kit';

const WAIT = { timeout: 30_000, interval: 100 };

/** The value of `trellis_consumer_lag_messages{topic, group}` in a scrape of the registry; undefined when the series is absent. */
async function scrapedLag(metrics: TrellisMetrics, topic: string, group: string): Promise<number | undefined> {
  const scrape = await metrics.registry.metrics();
  const line = scrape.split('\n').find((l) => l.startsWith('trellis_consumer_lag_messages{') && l.includes(`topic="${topic}"`) && l.includes(`group="${group}"`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describeOnBroker('consumer lag from a real broker', () => {
  const buses: KafkaEventBus[] = [];

  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.stop()));
  });

  afterAll(async () => {
    await deleteTestTopicsAndGroups();
  });

  it('exports the events a group has not consumed as trellis_consumer_lag_messages, back to 0 once it has', async () => {
    const prefix = uniquePrefix('lag');
    const publisher = new KafkaEventBus(testBusConfig(prefix));
    const consumer = new KafkaEventBus(testBusConfig(prefix));
    buses.push(publisher, consumer);
    await publisher.ensureTopics();
    let handled = 0;
    await consumer.subscribe('document.ingested', { group: 'chunking' }, async () => {
      handled++;
    });
    await consumer.subscribe('chunk.ready', { group: 'chunking' }, async () => undefined);
    const errors: unknown[] = [];
    const metrics = new TrellisMetrics('lag-test');
    // No caching here, so each scrape shows the broker's state now.
    metrics.trackConsumerLag(() => consumer.consumerLag(), (error) => errors.push(error), { maxAgeMs: 0, waitMs: 20_000 });

    // Seven events on several partitions, for a group that has not started consuming.
    for (let n = 0; n < 7; n++) await publisher.publish('document.ingested', `doc-${n}`, ingested(`doc-${n}`, String(n)));
    expect(await publisher.consumerLag()).toEqual([]);
    // Any process may ask about a group it is not part of: the sweeper in ingestion does.
    const chunking = [{ topic: 'document.ingested', group: 'chunking' }] as const;
    expect(await publisher.consumerLag(chunking)).toEqual([{ topic: 'document.ingested', group: 'chunking', messages: 7 }]);
    expect(await scrapedLag(metrics, 'document.ingested', 'chunking')).toBe(7);
    expect(await scrapedLag(metrics, 'chunk.ready', 'chunking')).toBe(0);

    await consumer.start();
    await vi.waitFor(() => expect(handled).toBe(7), WAIT);
    // Offsets are committed once each event is handled: the lag drains to 0.
    await vi.waitFor(async () => expect(await scrapedLag(metrics, 'document.ingested', 'chunking')).toBe(0), WAIT);
    expect(await publisher.consumerLag(chunking)).toEqual([{ topic: 'document.ingested', group: 'chunking', messages: 0 }]);

    expect(errors).toEqual([]);
  });
});
