import { ErrorCode, TOPICS, TrellisError } from '@trellis/contracts';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import { Partitioners } from 'kafkajs';
import type { Admin, Kafka, Message, Producer } from 'kafkajs';
import type { ConsumerLag, ConsumerOf, DeadLetter, EventBus, EventHandler, SubscribeOptions } from '../event-bus';
import { encodePayload } from '../payload-codec';
import { resolveKafkaBusConfig } from './kafka-bus.config';
import type { KafkaBusConfig, ResolvedKafkaBusConfig } from './kafka-bus.config';
import { createKafkaClient } from './kafka-client';
import { KafkaDeadLetters } from './kafka-dead-letters';
import { EventDelivery } from './event-delivery';
import type { KafkaSubscription } from './event-delivery';
import { KafkaGroupConsumer } from './kafka-group-consumer';
import { groupTopicsOf, measureConsumerLag } from './kafka-consumer-lag';
import { publishHeaders } from './kafka-headers';
import { KafkaNames } from './kafka-names';
import { ensureTopicsWith } from './kafka-topics';
import { LazyConnection } from './lazy-connection';

/**
 * The event bus of the distributed deployment, on Kafka (kafkajs), with the in-process bus's
 * semantics: a key's events stay in order (the key picks the partition), delivery is at
 * least once (offsets are committed only after the handler succeeded or the event was
 * dead-lettered), failures retry with backoff while the partition waits, and poison goes to
 * `<topic>.dlq`. Topics must exist: run `ensureTopics()` (or `trellis topics ensure`) first.
 */
export class KafkaEventBus implements EventBus {
  private readonly config: ResolvedKafkaBusConfig;
  private readonly names: KafkaNames;
  private readonly kafka: Kafka;
  private readonly producer: LazyConnection<Producer>;
  private readonly admin: LazyConnection<Admin>;
  private readonly deadLetterTopics: KafkaDeadLetters;
  private readonly delivery: EventDelivery;
  private readonly groups = new Map<string, KafkaGroupConsumer>();
  private state: 'configuring' | 'started' | 'stopping' | 'stopped' = 'configuring';
  private stopping: Promise<void> | undefined;

  constructor(config: KafkaBusConfig) {
    this.config = resolveKafkaBusConfig(config);
    this.names = new KafkaNames(this.config.topicPrefix);
    this.kafka = createKafkaClient(this.config);
    this.producer = new LazyConnection(() =>
      this.kafka.producer({
        // Idempotence with one request in flight: a retried send can neither duplicate nor overtake an earlier one.
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        // Murmur2, as the Java client: a key lands on the same partition whoever produced it.
        createPartitioner: Partitioners.DefaultPartitioner,
      }),
    );
    this.admin = new LazyConnection(() => this.kafka.admin());
    this.deadLetterTopics = new KafkaDeadLetters({
      kafka: this.kafka,
      admin: () => this.admin.get(),
      names: this.names,
      send: (topic, message) => this.send(topic, message),
      maxWaitTimeMs: this.config.consumer.maxWaitTimeMs,
      logger: this.config.logger,
    });
    this.delivery = new EventDelivery({
      retry: this.config.retry,
      heartbeatIntervalMs: this.config.consumer.heartbeatIntervalMs,
      logger: this.config.logger,
      writeDeadLetter: (event, failure) => this.deadLetterTopics.write(event, failure),
    });
  }

  /** Creates the topics and dead-letter topics that do not exist yet; returns their names. */
  async ensureTopics(): Promise<string[]> {
    return ensureTopicsWith(await this.admin.get(), { ...this.config, names: this.names });
  }

  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers: Record<string, string> = {}): Promise<void> {
    const bytes = encodePayload(topic, payload);
    await this.send(this.names.topic(topic), {
      key,
      value: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
      headers: publishHeaders(headers, TOPICS[topic].schemaVersion, this.config.traceparent?.()),
    });
  }

  async subscribe<T extends TopicName>(topic: T, options: SubscribeOptions<T>, handler: EventHandler<T>): Promise<void> {
    if (this.state !== 'configuring') {
      throw new TrellisError(ErrorCode.FailedPrecondition, `subscribe to ${topic} before start(): a running Kafka consumer cannot take more topics`);
    }
    const group = this.groups.get(options.group) ?? new KafkaGroupConsumer(options.group, { kafka: this.kafka, names: this.names, config: this.config, delivery: this.delivery });
    // The handler's payload type is erased here; the topic it was registered for still decides what it receives.
    group.add({ topic, options, handler } as unknown as KafkaSubscription);
    this.groups.set(options.group, group);
  }

  /** Dead letters of the topic not replayed yet, oldest first. */
  async deadLetters(topic: TopicName): Promise<DeadLetter[]> {
    return this.deadLetterTopics.list(topic);
  }

  async replayDeadLetters(topic: TopicName): Promise<number> {
    return this.deadLetterTopics.replay(topic);
  }

  async start(): Promise<void> {
    if (this.state !== 'configuring') return;
    this.state = 'started';
    await Promise.all([...this.groups.values()].map((group) => group.start()));
  }

  /** The SIGTERM path: consumers first (their in-flight handlers may still publish), then the producer. */
  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  /** Ready when the cluster answers and no group's consumer is down after a crash. */
  async ping(): Promise<void> {
    await (await this.admin.get()).describeCluster();
    for (const group of this.groups.values()) group.assertRunning();
  }

  /** Lag of this process's groups (or of `of`) from the broker; no broker round trip for a bus that only publishes. */
  async consumerLag(of?: readonly ConsumerOf[]): Promise<ConsumerLag[]> {
    const groups = of === undefined ? [...this.groups.values()].map((g) => ({ group: g.group, topics: g.topics() })) : groupTopicsOf(of);
    if (groups.length === 0) return [];
    return measureConsumerLag(await this.admin.get(), this.names, groups, this.config.fromBeginning);
  }

  private async shutDown(): Promise<void> {
    this.state = 'stopping';
    await Promise.all([...this.groups.values()].map((group) => group.stop()));
    this.state = 'stopped';
    await Promise.all([this.producer.close(), this.admin.close()]);
  }

  private async send(topic: string, message: Message): Promise<void> {
    if (this.state === 'stopped') throw new TrellisError(ErrorCode.FailedPrecondition, 'the event bus is stopped');
    // acks -1 (all in-sync replicas): required by the idempotent producer, and what makes a publish durable.
    await (await this.producer.get()).send({ topic, acks: -1, messages: [message] });
  }
}
