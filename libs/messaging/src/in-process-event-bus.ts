import { deadLetterTopic } from '@trellis/contracts';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import type { ConsumerLag, DeadLetter, EventBus, EventEnvelope, EventHandler, SubscribeOptions } from './event-bus';
import { decodePayload, encodePayload } from './payload-codec';
import { DEFAULT_RETRY_POLICY, backoffDelay, shouldRetry, toError } from './retry-policy';
import type { RetryPolicy } from './retry-policy';

interface QueuedEvent {
  readonly key: string;
  readonly bytes: Uint8Array;
  readonly headers: Record<string, string>;
}

interface Subscription {
  readonly topic: TopicName;
  readonly options: SubscribeOptions<TopicName>;
  readonly handler: EventHandler<TopicName>;
  /** One FIFO per partition: a key always maps to the same partition, so its events stay in order. */
  readonly partitions: QueuedEvent[][];
  readonly busy: boolean[];
}

export interface InProcessBusOptions {
  /** Partitions per topic; events of different keys in different partitions run concurrently. */
  readonly partitions?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** W3C traceparent of the caller's active span, added to published events that carry none (as on Kafka). */
  readonly traceparent?: () => string | undefined;
}

/**
 * The standalone event bus. Payloads are encoded with the topic's protobuf codec on publish
 * and decoded on delivery, exactly as over Kafka, so a schema mistake fails here too.
 * Events live in memory: on restart the pipeline is re-driven from the status columns.
 */
export class InProcessEventBus implements EventBus {
  private readonly subscriptions: Subscription[] = [];
  private readonly dlq = new Map<TopicName, DeadLetter[]>();
  private readonly partitionCount: number;
  private readonly retry: RetryPolicy;
  private running = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly attempts = new WeakMap<QueuedEvent, number>();

  constructor(private readonly options: InProcessBusOptions = {}) {
    this.partitionCount = options.partitions ?? 8;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers: Record<string, string> = {}): Promise<void> {
    const traceparent = headers.traceparent === undefined ? this.options.traceparent?.() : undefined;
    this.enqueueBytes(topic, key, encodePayload(topic, payload), traceparent ? { ...headers, traceparent } : headers);
  }

  /** Enqueues an already-encoded payload; also how malformed payloads reach consumers in tests. */
  enqueueBytes(topic: TopicName, key: string, bytes: Uint8Array, headers: Record<string, string> = {}): void {
    const partition = partitionOf(key, this.partitionCount);
    for (const sub of this.subscriptions) {
      if (sub.topic !== topic) continue;
      sub.partitions[partition]!.push({ key, bytes, headers: { ...headers } });
      this.pump(sub, partition);
    }
  }

  async subscribe<T extends TopicName>(topic: T, options: SubscribeOptions<T>, handler: EventHandler<T>): Promise<void> {
    this.subscriptions.push({
      topic,
      options: options as unknown as SubscribeOptions<TopicName>,
      handler: handler as unknown as EventHandler<TopicName>,
      partitions: Array.from({ length: this.partitionCount }, () => []),
      busy: Array.from({ length: this.partitionCount }, () => false),
    });
  }

  async deadLetters(topic: TopicName): Promise<DeadLetter[]> {
    return [...(this.dlq.get(topic) ?? [])];
  }

  async replayDeadLetters(topic: TopicName): Promise<number> {
    const letters = this.dlq.get(topic) ?? [];
    this.dlq.set(topic, []);
    for (const letter of letters) this.enqueueBytes(topic, letter.key, letter.payload, { ...letter.headers });
    return letters.length;
  }

  async start(): Promise<void> {
    this.running = true;
    for (const sub of this.subscriptions) sub.partitions.forEach((_, p) => this.pump(sub, p));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    await this.waitForHandlers();
  }

  async ping(): Promise<void> {}

  /** Per subscription, the events queued for it: not yet handled, in flight or waiting to be retried. */
  async consumerLag(): Promise<ConsumerLag[]> {
    return this.subscriptions.map((sub) => ({
      topic: sub.topic,
      group: sub.options.group,
      messages: sub.partitions.reduce((n, queue) => n + queue.length, 0),
    }));
  }

  /** Resolves once no event is queued or being handled. */
  async idle(): Promise<void> {
    if (this.pending() === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pending(): number {
    let queued = this.inFlight + this.timers.size;
    for (const sub of this.subscriptions) for (const q of sub.partitions) queued += q.length;
    return queued;
  }

  private async waitForHandlers(): Promise<void> {
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private pump(sub: Subscription, partition: number): void {
    if (!this.running || sub.busy[partition]) return;
    const event = sub.partitions[partition]![0];
    if (event === undefined) {
      this.notifyIfIdle();
      return;
    }
    sub.busy[partition] = true;
    this.inFlight++;
    void this.deliver(sub, event).then((retryAfterMs) => {
      this.inFlight--;
      if (retryAfterMs === undefined) {
        sub.partitions[partition]!.shift();
        sub.busy[partition] = false;
        this.pump(sub, partition);
        return;
      }
      // Keep the partition blocked during the backoff: later events of the key must wait.
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        sub.busy[partition] = false;
        this.pump(sub, partition);
      }, retryAfterMs);
      this.timers.add(timer);
    });
  }

  /** Handles one event; returns a delay when it should be retried, undefined when done. */
  private async deliver(sub: Subscription, event: QueuedEvent): Promise<number | undefined> {
    const attempt = (this.attempts.get(event) ?? 0) + 1;
    this.attempts.set(event, attempt);
    const maxAttempts = sub.options.maxAttempts ?? this.retry.maxAttempts;
    let envelope: EventEnvelope<TopicName> | undefined;
    try {
      const payload = decodePayload(sub.topic, event.bytes);
      envelope = { topic: sub.topic, key: event.key, payload, headers: event.headers, attempt };
      await sub.handler(envelope);
      return undefined;
    } catch (raw) {
      const error = toError(raw);
      if (envelope !== undefined && shouldRetry(raw, attempt, maxAttempts)) {
        this.options.logger?.warn({ topic: sub.topic, group: sub.options.group, attempt, err: error.message }, 'event handler failed; retrying');
        return backoffDelay(this.retry, attempt);
      }
      await this.deadLetter(sub, event, envelope, error, attempt);
      return undefined;
    }
  }

  private async deadLetter(sub: Subscription, event: QueuedEvent, envelope: EventEnvelope<TopicName> | undefined, error: Error, attempts: number): Promise<void> {
    this.options.logger?.error({ topic: deadLetterTopic(sub.topic), group: sub.options.group, attempts, err: error.message }, 'event dead-lettered');
    const letters = this.dlq.get(sub.topic) ?? [];
    letters.push({
      topic: sub.topic,
      key: event.key,
      group: sub.options.group,
      error: error.message,
      attempts,
      failedAt: new Date().toISOString(),
      payload: event.bytes,
      headers: event.headers,
    });
    this.dlq.set(sub.topic, letters);
    if (envelope !== undefined && sub.options.onDeadLetter) {
      try {
        await sub.options.onDeadLetter(envelope, error);
      } catch (hookError) {
        this.options.logger?.error({ err: toError(hookError).message }, 'dead-letter hook failed');
      }
    }
  }

  private notifyIfIdle(): void {
    if (this.pending() !== 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** Stable partition of a key (FNV-1a), the same on every run. */
export function partitionOf(key: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % partitions;
}
