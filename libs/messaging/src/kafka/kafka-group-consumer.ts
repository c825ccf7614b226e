import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import type { Consumer, ConsumerCrashEvent, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { backoffDelay, toError } from '../retry-policy';
import type { ResolvedKafkaBusConfig } from './kafka-bus.config';
import type { EventDelivery, KafkaSubscription, RawEvent } from './event-delivery';
import { headersToRecord } from './kafka-headers';
import type { KafkaNames } from './kafka-names';
import { runPartitionBatch } from './partition-batch';

export interface GroupConsumerDeps {
  readonly kafka: Kafka;
  readonly names: KafkaNames;
  readonly config: ResolvedKafkaBusConfig;
  readonly delivery: EventDelivery;
}

/**
 * The one kafkajs consumer of a consumer group, shared by every topic the service subscribes
 * in that group. A partition's events of distinct keys are handled side by side
 * (`eventsPerPartition`, runPartitionBatch), and offsets are committed up to the first event
 * not yet handled or dead-lettered: a crash redelivers the events in flight and those after them.
 *
 * kafkajs starts a crashed consumer again only when the error was retriable; after any other
 * it stays stopped. This class then starts a new consumer, with backoff, and reports itself
 * down (`assertRunning`) until that consumer has joined the group.
 */
export class KafkaGroupConsumer {
  /** Subscriptions by the topic's name on the cluster. */
  private readonly subscriptions = new Map<string, KafkaSubscription>();
  private consumer: Consumer | undefined;
  private stopping = false;
  /** Why the group has no running consumer, while the bus starts a new one. */
  private down: string | undefined;
  private restartTimer: NodeJS.Timeout | undefined;

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

  /** Throws UNAVAILABLE while the group's consumer crashed and a new one is not running yet (readiness). */
  assertRunning(): void {
    if (this.down !== undefined) {
      throw new TrellisError(ErrorCode.Unavailable, `the consumer of group ${this.group} crashed (${this.down}); a new one is starting`);
    }
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
    consumer.on(consumer.events.CRASH, (event: ConsumerCrashEvent) => this.crashed(consumer, event.payload));
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
    clearTimeout(this.restartTimer);
    await this.consumer?.disconnect();
  }

  private crashed(consumer: Consumer, { error, restart }: ConsumerCrashEvent['payload']): void {
    if (this.stopping || consumer !== this.consumer) return;
    const { logger, onConsumerCrash } = this.deps.config;
    // After a retriable crash kafkajs starts the same consumer again, after its own backoff.
    if (!restart) {
      this.down = `${error.name}: ${error.message}`;
      logger.error({ group: this.group, err: this.down }, 'consumer crashed on an error kafkajs does not restart after; starting a new one');
      this.restartAfterBackoff(1);
    }
    onConsumerCrash?.({ group: this.group, error: error.message, restartedBy: restart ? 'kafkajs' : 'bus' });
  }

  private restartAfterBackoff(attempt: number): void {
    const delay = backoffDelay(this.deps.config.retry, attempt);
    this.restartTimer = setTimeout(() => void this.restart(attempt), delay);
  }

  private async restart(attempt: number): Promise<void> {
    if (this.stopping) return;
    // kafkajs disconnected the crashed consumer; one whose start failed half way is disconnected here.
    await this.consumer?.disconnect().catch(() => undefined);
    try {
      await this.start();
      // stop() came while the new consumer was joining: it may have disconnected it before run().
      if (this.stopping) {
        await this.consumer?.disconnect();
        return;
      }
      this.down = undefined;
      this.deps.config.logger.info({ group: this.group, attempt }, 'consumer started again after a crash');
    } catch (error) {
      if (this.stopping) return;
      this.deps.config.logger.warn({ group: this.group, attempt, err: toError(error).message }, 'consumer could not be started again; retrying');
      this.restartAfterBackoff(attempt + 1);
    }
  }

  private async consumeBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, commitOffsetsIfNecessary, uncommittedOffsets, heartbeat, isRunning, isStale } = payload;
    const subscription = this.subscriptions.get(batch.topic);
    if (subscription === undefined) return;
    const control = { heartbeat, shouldAbandon: () => this.stopping || !isRunning() || isStale() };
    await runPartitionBatch(
      batch.messages.map((message) => ({ ...toRawEvent(message), offset: message.offset })),
      {
        concurrency: Math.max(this.deps.config.eventsPerPartition, subscription.options.eventsPerPartition ?? 1),
        deliver: (event) => this.deps.delivery.deliver(subscription, event, control),
        commit: async (offset) => {
          resolveOffset(offset);
          await commitOffsetsIfNecessary(uncommittedOffsets());
        },
        shouldAbandon: control.shouldAbandon,
      },
    );
  }
}

function toRawEvent(message: KafkaMessage): RawEvent {
  return { key: message.key?.toString() ?? '', value: message.value, headers: headersToRecord(message.headers) };
}
