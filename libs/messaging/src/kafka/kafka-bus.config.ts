import { TrellisError } from '@trellis/contracts';
import { DEFAULT_RETRY_POLICY } from '../retry-policy';
import type { RetryPolicy } from '../retry-policy';

/** Where the bus and kafkajs write their logs (pino's `(obj, msg)` shape). */
export interface KafkaBusLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Group-membership and fetch timings of the bus's consumers (kafkajs defaults when unset). */
export interface KafkaConsumerTimings {
  /** A member silent for this long is dropped and its partitions reassigned. kafkajs default 30 000. */
  readonly sessionTimeoutMs?: number;
  /** How often a member proves it is alive, also while a handler runs or waits to retry. Default 3 000. */
  readonly heartbeatIntervalMs?: number;
  /** How long a rebalance waits for members to rejoin. kafkajs default 60 000. */
  readonly rebalanceTimeoutMs?: number;
  /** Longest a fetch waits for new events; it also bounds how long `stop()` waits for an idle fetch. Default 5 000. */
  readonly maxWaitTimeMs?: number;
}

export interface KafkaBusConfig {
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /** Client id the brokers see (logs, quotas). */
  readonly clientId: string;
  /**
   * Prepended to every topic and consumer-group name, so that environments (or test runs)
   * sharing a cluster cannot see each other's events. Default ''.
   */
  readonly topicPrefix?: string;
  /** Partitions of each topic `ensureTopics` creates: the most consumers of a group that can work at once. Default 6. */
  readonly partitions?: number;
  /** Replicas of each topic `ensureTopics` creates. Default 1 (one broker). */
  readonly replicationFactor?: number;
  /** Partitions a consumer handles at the same time; events of one key always stay in order. Default 1. */
  readonly partitionsConsumedConcurrently?: number;
  /** Events of distinct keys a consumer handles at once within one partition; a key's events stay in order. Default 1. */
  readonly eventsPerPartition?: number;
  /** Attempts and backoff of failing handlers, as in the in-process bus. */
  readonly retry?: Partial<RetryPolicy>;
  /**
   * Where a consumer group with no committed offset starts. Default true (the oldest event):
   * a service deployed after events were published must still index them.
   */
  readonly fromBeginning?: boolean;
  readonly consumer?: KafkaConsumerTimings;
  /** W3C traceparent of the caller's active span, added to published events that carry none. */
  readonly traceparent?: () => string | undefined;
  /** Lowest kafkajs log level passed to the logger. Default 'warn'. */
  readonly kafkaLogLevel?: 'error' | 'warn' | 'info';
  readonly logger: KafkaBusLogger;
  /** Told of every consumer crash (for a metric); the bus restarts the consumer either way. */
  readonly onConsumerCrash?: (crash: ConsumerCrash) => void;
}

/**
 * A consumer of a group stopped on an error. kafkajs starts it again itself after a retriable
 * error (`restartedBy: 'kafkajs'`); after any other the bus starts a new one (`'bus'`).
 */
export interface ConsumerCrash {
  readonly group: string;
  readonly error: string;
  readonly restartedBy: 'kafkajs' | 'bus';
}

export type ResolvedKafkaBusConfig = Required<Omit<KafkaBusConfig, 'traceparent' | 'retry' | 'consumer' | 'onConsumerCrash'>> & {
  readonly retry: RetryPolicy;
  readonly consumer: Required<KafkaConsumerTimings>;
  readonly traceparent: (() => string | undefined) | undefined;
  readonly onConsumerCrash: ((crash: ConsumerCrash) => void) | undefined;
};

const DEFAULT_CONSUMER_TIMINGS: Required<KafkaConsumerTimings> = {
  sessionTimeoutMs: 30_000,
  heartbeatIntervalMs: 3_000,
  rebalanceTimeoutMs: 60_000,
  maxWaitTimeMs: 5_000,
};

/** Fills in defaults and rejects a bad config with every problem listed at once. */
export function resolveKafkaBusConfig(config: KafkaBusConfig): ResolvedKafkaBusConfig {
  const resolved: ResolvedKafkaBusConfig = {
    brokers: config.brokers,
    clientId: config.clientId,
    topicPrefix: config.topicPrefix ?? '',
    partitions: config.partitions ?? 6,
    replicationFactor: config.replicationFactor ?? 1,
    partitionsConsumedConcurrently: config.partitionsConsumedConcurrently ?? 1,
    eventsPerPartition: config.eventsPerPartition ?? 1,
    retry: { ...DEFAULT_RETRY_POLICY, ...config.retry },
    fromBeginning: config.fromBeginning ?? true,
    consumer: { ...DEFAULT_CONSUMER_TIMINGS, ...config.consumer },
    traceparent: config.traceparent,
    onConsumerCrash: config.onConsumerCrash,
    kafkaLogLevel: config.kafkaLogLevel ?? 'warn',
    logger: config.logger,
  };
  const problems = configProblems(resolved);
  if (problems.length > 0) throw TrellisError.invalid(`invalid Kafka bus config: ${problems.join('; ')}`);
  return resolved;
}

function configProblems(config: ResolvedKafkaBusConfig): string[] {
  const problems: string[] = [];
  if (config.brokers.length === 0) problems.push('brokers is empty');
  if (config.clientId.trim() === '') problems.push('clientId is empty');
  const positive: Array<[string, number]> = [
    ['partitions', config.partitions],
    ['replicationFactor', config.replicationFactor],
    ['partitionsConsumedConcurrently', config.partitionsConsumedConcurrently],
    ['eventsPerPartition', config.eventsPerPartition],
    ['retry.maxAttempts', config.retry.maxAttempts],
    ['consumer.sessionTimeoutMs', config.consumer.sessionTimeoutMs],
    ['consumer.heartbeatIntervalMs', config.consumer.heartbeatIntervalMs],
    ['consumer.rebalanceTimeoutMs', config.consumer.rebalanceTimeoutMs],
    ['consumer.maxWaitTimeMs', config.consumer.maxWaitTimeMs],
  ];
  for (const [name, value] of positive) {
    if (!Number.isInteger(value) || value < 1) problems.push(`${name} must be a positive integer (got ${value})`);
  }
  if (config.consumer.heartbeatIntervalMs >= config.consumer.sessionTimeoutMs) {
    problems.push('consumer.heartbeatIntervalMs must be below consumer.sessionTimeoutMs');
  }
  return problems;
}
