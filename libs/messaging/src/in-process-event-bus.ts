import { deadLetterTopic } from '@trellis/contracts';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import type { ConsumerLag, ConsumerOf, DeadLetter, EventBus, EventEnvelope, EventHandler, SubscribeOptions } from './event-bus';
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
  /** Per key, its events not yet taken by a handler, in the order they were published. */
  readonly waiting: Map<string, QueuedEvent[]>;
  /** Keys whose next event can be taken (waiting, and none of theirs taken), in the order they became so. */
  readonly ready: string[];
  /** Keys with an event in a handler or waiting out a retry's backoff: their later events wait. */
  readonly busyKeys: Set<string>;
  /** Events in `waiting`. */
  queued: number;
}

export interface InProcessBusOptions {
  /**
   * Events one subscription handles at once, unless it sets its own (default 8): of different
   * keys, while events of one key are handled one after another, in order.
   */
  readonly concurrency?: number;
  readonly retry?: Partial<RetryPolicy>;
  readonly logger?: { warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** W3C traceparent of the caller's active span, added to published events that carry none (as on Kafka). */
  readonly traceparent?: () => string | undefined;
}

/**
 * The standalone event bus. Payloads are encoded with the topic's protobuf codec on publish
 * and decoded on delivery, exactly as over Kafka, so a schema mistake fails here too.
 * Events live in memory: on restart the pipeline is re-driven from the status columns.
 *
 * Ordered per key as a Kafka partition is, but without partitions: a free handler takes the
 * next event of the key that has waited longest with none of its events in a handler, so a slow
 * key never holds keys that would have hashed beside it (with 8 key-hashed partitions, the last
 * of 300 documents' extraction calls queued in a few of them: 1–3 LLM calls in flight of 8).
 */
export class InProcessEventBus implements EventBus {
  private readonly subscriptions: Subscription[] = [];
  private readonly dlq = new Map<TopicName, DeadLetter[]>();
  private readonly concurrency: number;
  private readonly retry: RetryPolicy;
  private running = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  /** Retries waiting out their backoff, each with what gives its event back to the queue should the bus stop first. */
  private readonly timers = new Map<NodeJS.Timeout, () => void>();
  private readonly attempts = new WeakMap<QueuedEvent, number>();

  constructor(private readonly options: InProcessBusOptions = {}) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  }

  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, headers: Record<string, string> = {}): Promise<void> {
    const traceparent = headers.traceparent === undefined ? this.options.traceparent?.() : undefined;
    this.enqueueBytes(topic, key, encodePayload(topic, payload), traceparent ? { ...headers, traceparent } : headers);
  }

  /** Enqueues an already-encoded payload; also how malformed payloads reach consumers in tests. */
  enqueueBytes(topic: TopicName, key: string, bytes: Uint8Array, headers: Record<string, string> = {}): void {
    for (const sub of this.subscriptions) {
      if (sub.topic !== topic) continue;
      const waiting = sub.waiting.get(key);
      if (waiting === undefined) {
        sub.waiting.set(key, [{ key, bytes, headers: { ...headers } }]);
        if (!sub.busyKeys.has(key)) sub.ready.push(key);
      } else {
        waiting.push({ key, bytes, headers: { ...headers } });
      }
      sub.queued++;
      this.pump(sub);
    }
  }

  async subscribe<T extends TopicName>(topic: T, options: SubscribeOptions<T>, handler: EventHandler<T>): Promise<void> {
    this.subscriptions.push({
      topic,
      options: options as unknown as SubscribeOptions<TopicName>,
      handler: handler as unknown as EventHandler<TopicName>,
      waiting: new Map(),
      ready: [],
      busyKeys: new Set(),
      queued: 0,
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
    for (const sub of this.subscriptions) this.pump(sub);
  }

  async stop(): Promise<void> {
    this.running = false;
    // Handlers finish first: one that fails now still sets its retry, which is then given back.
    await this.waitForHandlers();
    for (const [timer, giveBack] of this.timers) {
      clearTimeout(timer);
      giveBack();
    }
    this.timers.clear();
  }

  async ping(): Promise<void> {}

  /** Per subscription (or per pair of `of`), the events queued for it: not yet handled, in flight or waiting to be retried. */
  async consumerLag(of?: readonly ConsumerOf[]): Promise<ConsumerLag[]> {
    const lagOf = (sub: Subscription) => sub.queued + sub.busyKeys.size;
    if (of === undefined) return this.subscriptions.map((sub) => ({ topic: sub.topic, group: sub.options.group, messages: lagOf(sub) }));
    return of.map(({ topic, group }) => ({
      topic,
      group,
      messages: this.subscriptions.filter((sub) => sub.topic === topic && sub.options.group === group).reduce((sum, sub) => sum + lagOf(sub), 0),
    }));
  }

  /** Resolves once no event is queued or being handled. */
  async idle(): Promise<void> {
    if (this.pending() === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pending(): number {
    let queued = this.inFlight + this.timers.size;
    for (const sub of this.subscriptions) queued += sub.queued;
    return queued;
  }

  private async waitForHandlers(): Promise<void> {
    while (this.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
  }

  /** Hands waiting events to free handlers, the next of each ready key in turn, while fewer than the subscription's concurrency are taken. */
  private pump(sub: Subscription): void {
    if (!this.running) return;
    const concurrency = sub.options.concurrency ?? this.concurrency;
    while (sub.busyKeys.size < concurrency && sub.ready.length > 0) {
      const key = sub.ready.shift()!;
      const waiting = sub.waiting.get(key)!;
      const event = waiting.shift()!;
      if (waiting.length === 0) sub.waiting.delete(key);
      sub.queued--;
      sub.busyKeys.add(key);
      this.handle(sub, event);
    }
    this.notifyIfIdle();
  }

  /** Delivers a taken event until it is done, retrying after a backoff while its key stays busy; then frees the key. */
  private handle(sub: Subscription, event: QueuedEvent): void {
    this.inFlight++;
    void this.deliver(sub, event).then((retryAfterMs) => {
      this.inFlight--;
      if (retryAfterMs === undefined) {
        this.release(sub, event.key);
        this.pump(sub);
        return;
      }
      // Stopped before its retry, the event waits first of its key again, for the next start.
      const giveBack = () => {
        sub.waiting.set(event.key, [event, ...(sub.waiting.get(event.key) ?? [])]);
        sub.queued++;
        this.release(sub, event.key);
      };
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        if (this.running) this.handle(sub, event);
        else giveBack();
      }, retryAfterMs);
      this.timers.set(timer, giveBack);
    });
  }

  /** The key's event is done (or given back): its next one, if any, can be taken. */
  private release(sub: Subscription, key: string): void {
    sub.busyKeys.delete(key);
    if (sub.waiting.has(key)) sub.ready.push(key);
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
