import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import type { Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import type { ResolvedKafkaBusConfig } from './kafka-bus.config';
import type { EventDelivery, KafkaSubscription, RawEvent } from './event-delivery';
import { headersToRecord } from './kafka-headers';
import type { KafkaNames } from './kafka-names';

export interface GroupConsumerDeps {
  readonly kafka: Kafka;
  readonly names: KafkaNames;
  readonly config: ResolvedKafkaBusConfig;
  readonly delivery: EventDelivery;
}

/**
 * The one kafkajs consumer of a consumer group, shared by every topic the service subscribes
 * in that group. Offsets are committed one event at a time, and only once the event was
 * handled or dead-lettered: a crash redelivers exactly the events still in flight.
 */
export class KafkaGroupConsumer {
  /** Subscriptions by the topic's name on the cluster. */
  private readonly subscriptions = new Map<string, KafkaSubscription>();
  private consumer: Consumer | undefined;
  private stopping = false;

  constructor(
    readonly group: string,
    private readonly deps: GroupConsumerDeps,
  ) {}

  add(subscription: KafkaSubscription): void {
    const topic = this.deps.names.topic(subscription.topic);
    // One consumer has one handler per topic; a second would silently share the events with the first.
    if (this.subscriptions.has(topic)) {
      throw new TrellisError(ErrorCode.AlreadyExists, `group ${this.group} already subscribes ${subscription.topic}`);
    }
    this.subscriptions.set(topic, subscription);
  }

  /** The topics this group subscribes, by their logical names. */
  topics(): TopicName[] {
    return [...this.subscriptions.values()].map((s) => s.topic);
  }

  /** Connects, joins the group and starts fetching; resolves once the group is joined. */
  async start(): Promise<void> {
    const { config, kafka, names } = this.deps;
    const consumer = kafka.consumer({
      groupId: names.group(this.group),
      sessionTimeout: config.consumer.sessionTimeoutMs,
      heartbeatInterval: config.consumer.heartbeatIntervalMs,
      rebalanceTimeout: config.consumer.rebalanceTimeoutMs,
      maxWaitTimeInMs: config.consumer.maxWaitTimeMs,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: [...this.subscriptions.keys()], fromBeginning: config.fromBeginning });
    await consumer.run({
      autoCommit: false,
      // Offsets the loop did not resolve are fetched again: that is how an abandoned event is redelivered.
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: config.partitionsConsumedConcurrently,
      eachBatch: (batch) => this.consumeBatch(batch),
    });
  }

  /** Stops fetching, waits for the event in flight to finish and be committed, leaves the group. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.consumer?.disconnect();
  }

  private async consumeBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, uncommittedOffsets, heartbeat, isRunning, isStale } = payload;
    const subscription = this.subscriptions.get(batch.topic);
    if (subscription === undefined) return;
    const control = { heartbeat, shouldAbandon: () => this.stopping || !isRunning() || isStale() };
    for (const message of batch.messages) {
      if (control.shouldAbandon()) return;
      const outcome = await this.deps.delivery.deliver(subscription, toRawEvent(message), control);
      if (outcome === 'abandoned') return;
      resolveOffset(message.offset);
      await commitOffsetsIfNecessary(uncommittedOffsets());
    }
  }
}

function toRawEvent(message: KafkaMessage): RawEvent {
  return { key: message.key?.toString() ?? '', value: message.value, headers: headersToRecord(message.headers) };
}
