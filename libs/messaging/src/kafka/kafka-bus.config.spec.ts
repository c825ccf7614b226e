import { describe, expect, it } from 'vitest';
import { resolveKafkaBusConfig } from './kafka-bus.config';

const logger = { info: () => undefined, warn: () => undefined, error: () => undefined };

describe('resolveKafkaBusConfig', () => {
  it('fills in the defaults', () => {
    const config = resolveKafkaBusConfig({ brokers: ['k:9092'], clientId: 'ingestion', logger });
    expect(config).toMatchObject({ topicPrefix: '', partitions: 6, replicationFactor: 1, partitionsConsumedConcurrently: 1, fromBeginning: true, kafkaLogLevel: 'warn' });
    expect(config.retry).toEqual({ maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 });
  });

  it('lists every problem of a bad config at once', () => {
    expect(() =>
      resolveKafkaBusConfig({ brokers: [], clientId: 'x', partitions: 0, consumer: { sessionTimeoutMs: 1_000, heartbeatIntervalMs: 3_000 }, logger }),
    ).toThrow(/brokers is empty; partitions must be a positive integer \(got 0\); consumer.heartbeatIntervalMs must be below/);
  });
});
