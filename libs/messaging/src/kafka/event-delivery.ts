import type { TopicName, TopicPayload } from '@trellis/contracts';
import type { EventEnvelope, EventHandler, SubscribeOptions } from '../event-bus';
import { decodePayload } from '../payload-codec';
import { backoffDelay, shouldRetry, toError } from '../retry-policy';
import type { RetryPolicy } from '../retry-policy';
import type { KafkaBusLogger } from './kafka-bus.config';
import type { DeadLetterFailure } from './kafka-headers';
import { waitForRetry, whileHeartbeating } from './keep-alive';
import type { DeliveryControl } from './keep-alive';

/** One subscriber of a topic, with its payload type erased so subscribers of every topic fit one map. */
export interface KafkaSubscription {
  readonly topic: TopicName;
  readonly options: SubscribeOptions<TopicName>;
  readonly handler: EventHandler<TopicName>;
}

/** A record as it came off the topic. */
export interface RawEvent {
  readonly key: string;
  readonly value: Buffer | null;
  readonly headers: Record<string, string>;
}

/** What the consumer loop does next: commit the offset (handled, dead-lettered) or leave it (abandoned). */
export type DeliveryOutcome = 'handled' | 'dead-lettered' | 'abandoned';

export interface EventDeliveryDeps {
  readonly retry: RetryPolicy;
  readonly heartbeatIntervalMs: number;
  readonly logger: KafkaBusLogger;
  /** Writes the event to its dead-letter topic; must have succeeded before the offset is committed. */
  readonly writeDeadLetter: (event: RawEvent, failure: DeadLetterFailure) => Promise<void>;
}

/**
 * Hands one event to its subscriber with the in-process bus's semantics: retry with
 * exponential backoff, dead-letter poison at once and the rest after `maxAttempts`. It runs
 * inside the consumer's batch loop, so while it retries the partition is blocked.
 */
export class EventDelivery {
  constructor(private readonly deps: EventDeliveryDeps) {}

  async deliver(subscription: KafkaSubscription, event: RawEvent, control: DeliveryControl): Promise<DeliveryOutcome> {
    const { topic, options, handler } = subscription;
    let payload: TopicPayload<TopicName>;
    try {
      payload = decodeEvent(topic, event.value);
    } catch (error) {
      // No handler can process bytes that are not a payload of the topic: poison.
      await this.deadLetter(subscription, event, undefined, new Error(`undecodable payload: ${toError(error).message}`), 1);
      return 'dead-lettered';
    }
    const maxAttempts = options.maxAttempts ?? this.deps.retry.maxAttempts;
    for (let attempt = 1; ; attempt++) {
      const envelope: EventEnvelope<TopicName> = { topic, key: event.key, payload, headers: event.headers, attempt };
      try {
        await whileHeartbeating(() => handler(envelope), control.heartbeat, this.deps.heartbeatIntervalMs);
        return 'handled';
      } catch (raw) {
        const error = toError(raw);
        if (!shouldRetry(raw, attempt, maxAttempts)) {
          await this.deadLetter(subscription, event, envelope, error, attempt);
          return 'dead-lettered';
        }
        this.deps.logger.warn({ topic, group: options.group, key: event.key, attempt, err: error.message }, 'event handler failed; retrying');
        if (!(await waitForRetry(backoffDelay(this.deps.retry, attempt), control))) return 'abandoned';
      }
    }
  }

  private async deadLetter(
    subscription: KafkaSubscription,
    event: RawEvent,
    envelope: EventEnvelope<TopicName> | undefined,
    error: Error,
    attempts: number,
  ): Promise<void> {
    const { topic, options } = subscription;
    this.deps.logger.error({ topic, group: options.group, key: event.key, attempts, err: error.message }, 'event dead-lettered');
    await this.deps.writeDeadLetter(event, { sourceTopic: topic, group: options.group, error: error.message, attempts, failedAt: new Date() });
    if (envelope === undefined || options.onDeadLetter === undefined) return;
    try {
      await options.onDeadLetter(envelope, error);
    } catch (hookError) {
      this.deps.logger.error({ topic, group: options.group, key: event.key, err: toError(hookError).message }, 'dead-letter hook failed');
    }
  }
}

/** A record without a value (a tombstone) means nothing on an event topic: it cannot be decoded either. */
function decodeEvent(topic: TopicName, value: Buffer | null): TopicPayload<TopicName> {
  if (value === null) throw new Error('record has no value');
  return decodePayload(topic, value);
}
