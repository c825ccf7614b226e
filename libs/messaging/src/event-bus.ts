import type { TopicName, TopicPayload } from '@trellis/contracts';

/** One delivered event. `attempt` starts at 1 and grows with each redelivery. */
export interface EventEnvelope<T extends TopicName> {
  readonly topic: T;
  readonly key: string;
  readonly payload: TopicPayload<T>;
  readonly headers: Readonly<Record<string, string>>;
  readonly attempt: number;
}

export type EventHandler<T extends TopicName> = (event: EventEnvelope<T>) => Promise<void>;

export interface SubscribeOptions<T extends TopicName> {
  /** Consumer group: each group gets every event once; a topic's events are shared within it. */
  readonly group: string;
  /** Deliveries before an event is dead-lettered. Default 5. */
  readonly maxAttempts?: number;
  /** Called once an event is dead-lettered, so the domain can record the failure. */
  readonly onDeadLetter?: (event: EventEnvelope<T>, error: Error) => Promise<void>;
  /**
   * Events of this subscription handled at once, on the in-process bus (its own default
   * otherwise). Kafka's consumers take theirs from their config: TRELLIS_KAFKA_CONCURRENCY
   * partitions at once, TRELLIS_KAFKA_EVENTS_PER_PARTITION keys at once within each.
   */
  readonly concurrency?: number;
  /**
   * On Kafka, events of distinct keys this subscription handles at once within a partition,
   * when it needs more than TRELLIS_KAFKA_EVENTS_PER_PARTITION: handlers that mostly wait (on a
   * model call another process makes) keep the partition moving only if many wait at once.
   */
  readonly eventsPerPartition?: number;
}

/** A dead-lettered event as kept on `<topic>.dlq`. */
export interface DeadLetter {
  readonly topic: TopicName;
  readonly key: string;
  readonly group: string;
  readonly error: string;
  readonly attempts: number;
  readonly failedAt: string;
  readonly payload: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
}

/** A consumer group reading a topic. */
export interface ConsumerOf {
  readonly topic: TopicName;
  readonly group: string;
}

/** How far a consumer group is behind on a topic: events published that it has not handled yet. */
export interface ConsumerLag {
  readonly topic: TopicName;
  readonly group: string;
  /** Summed over the topic's partitions. */
  readonly messages: number;
}

/**
 * The event-bus port. Adapters: in-process (standalone) and Kafka (distributed). Both give
 * the same semantics: events with the same key are handled in order, delivery is at least
 * once, failures retry with exponential backoff, and events that keep failing (or cannot be
 * processed at all) go to `<topic>.dlq` while the consumer moves on.
 */
export interface EventBus {
  publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers?: Record<string, string>): Promise<void>;
  subscribe<T extends TopicName>(topic: T, options: SubscribeOptions<T>, handler: EventHandler<T>): Promise<void>;
  /** Dead letters of a topic, oldest first. */
  deadLetters(topic: TopicName): Promise<DeadLetter[]>;
  /** Publishes a topic's dead letters again and clears them; returns how many. */
  replayDeadLetters(topic: TopicName): Promise<number>;
  /** Starts delivery to the subscribers registered so far. */
  start(): Promise<void>;
  /** Stops taking new events, lets in-flight handlers finish. */
  stop(): Promise<void>;
  /** Cheap connectivity check for readiness probes. */
  ping(): Promise<void>;
  /**
   * The lag of every (topic, group) this bus has a subscription for, started or not; empty for
   * a bus that only publishes. Given `of`, the lag of those (topic, group) pairs instead, each
   * once, whether this process consumes them or not: how far the rest of the pipeline is behind.
   * Kafka asks the broker (committed offsets against end offsets); the in-process bus counts the
   * events queued and not yet handled (none for a group it has no subscription for).
   */
  consumerLag(of?: readonly ConsumerOf[]): Promise<ConsumerLag[]>;
}

/** Injection token of the EventBus in Nest modules. */
export const EVENT_BUS = Symbol.for('trellis.event-bus');

/** Injection token of the EventOutbox (outbox/event-outbox.ts) in Nest modules. */
export const EVENT_OUTBOX = Symbol.for('trellis.event-outbox');
