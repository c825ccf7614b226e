import { randomUUID } from 'node:crypto';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { KbScope, OutboxEvent, TopicName, TopicPayload } from '@trellis/contracts';
import type { EventBus } from '../event-bus';
import { decodePayload, encodePayload } from '../payload-codec';
import { toError } from '../retry-policy';

/** The store's side of the outbox, as the publisher and its relay use it. */
export interface OutboxStore {
  appendOutboxEvents(events: readonly OutboxEvent[]): Promise<void>;
  listOutboxEvents(before: string, limit: number): Promise<readonly OutboxEvent[]>;
  deleteOutboxEvents(ids: readonly string[]): Promise<number>;
  countOutboxEvents(before?: string): Promise<number>;
}

/** The store lease that lets one relay at a time publish what was left behind. */
export interface RelayLease {
  acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean>;
  releaseLease(key: string, holder: string): Promise<void>;
}

export interface OutboxOptions {
  /** How long a stage waits for the broker before it leaves its events to the relay. */
  readonly publishTimeoutMs: number;
  /** How old an event must be before the relay takes it (longer than the publish timeout). */
  readonly relayAfterMs: number;
  /** Events the relay reads at a time. */
  readonly batchSize: number;
  /** How long one relay pass may hold the lease before another process may take over. */
  readonly leaseMs: number;
}

/** Where the outbox reports what it did (metrics and logs). */
export interface OutboxTelemetry {
  published(by: 'stage' | 'relay', count: number): void;
  /** Events the broker did not take (the producer's retries ran out); they wait in the outbox. */
  failed(by: 'stage' | 'relay', count: number, error: Error): void;
  /** Events older than `relayAfterMs` still in the outbox. */
  waiting(count: number): void;
  /** Published events whose rows could not be deleted: the relay will publish them again. */
  undeleted(count: number, error: Error): void;
}

/** Events published between two yields to the event loop: a document's thousands of chunks must not hold it. */
const PUBLISHES_PER_TURN = 64;

/**
 * Keys that may fail in one relay pass before it ends: one failing event (a document whose event
 * the broker refuses) must not stop the others, but an unreachable broker fails every key, each
 * after the producer's own retries, and the pass must not outlive its lease trying them all.
 */
const RELAY_FAILED_KEYS = 3;

/** The store lease of the relay: one process at a time, across every tenant. */
export const OUTBOX_RELAY_LEASE = 'trellis.outbox-relay';

/**
 * An event of a knowledge base for the outbox, headed with its tenant and knowledge base; its
 * payload encoded now, so the store keeps exactly what the broker will get.
 */
export function outboxEvent<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>, scope: KbScope): OutboxEvent {
  return { id: randomUUID(), topic, key, payload: encodePayload(topic, payload), headers: { 'trellis-tenant': scope.tenantId, 'trellis-kb': scope.kbId } };
}

/**
 * An event about one chunk (`chunk.ready`, `chunk.extracted`) for the outbox, keyed by the
 * chunk: the chunks of one document are extracted and written to the graph side by side. Keyed
 * by their document, a large document's chunks queued in one partition, one LLM call at a time
 * (96 chunks took 21 s where 8 calls in flight need 2.4 s).
 */
export function chunkOutboxEvent<T extends 'chunk.ready' | 'chunk.extracted'>(topic: T, payload: TopicPayload<T> & { chunkId: string }, scope: KbScope): OutboxEvent {
  return outboxEvent(topic, payload.chunkId, payload, scope);
}

/**
 * Publishes events that were committed with the change they announce (a transactional outbox):
 * a stage writes its change and its events in one transaction, then hands the events here. They
 * are published at once and deleted; when the broker does not take them (an outage, a restart,
 * a crash of this process before it got here), they stay in the store and the relay publishes
 * them, under a store lease, oldest first. Delivery is therefore at least once and never lost;
 * every consumer is idempotent, so a repeat changes nothing. Events with one key (a document, a
 * chunk) are published in the order they were written: after a failure, the rest of that key waits.
 */
export class EventOutbox {
  private readonly holder = `outbox-relay-${randomUUID()}`;

  constructor(
    private readonly bus: Pick<EventBus, 'publish'>,
    private readonly store: OutboxStore,
    private readonly lease: RelayLease,
    private readonly options: OutboxOptions,
    private readonly telemetry: OutboxTelemetry,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Publishes events already committed in the outbox and deletes them. Never throws: what the
   * broker did not take within the publish timeout is the relay's (a publish still under way
   * then deletes its events when it ends, so the relay rarely repeats one).
   */
  async publishCommitted(events: readonly OutboxEvent[]): Promise<void> {
    if (events.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.publishTimeoutMs);
    });
    const publishing = this.publishAndDelete(events, 'stage');
    await Promise.race([publishing, timeout]);
    clearTimeout(timer);
  }

  /** Re-announces stored work (no change of its own goes with it): into the outbox, then published. */
  async announce(events: readonly OutboxEvent[]): Promise<void> {
    await this.store.appendOutboxEvents(events);
    await this.publishCommitted(events);
  }

  /**
   * One pass of the relay under the lease: publishes the events older than `relayAfterMs`, in
   * the order they were written, until none is left or the broker refuses; resolves to how
   * many it published, or null when another process holds the lease.
   */
  async relayOnce(): Promise<number | null> {
    const started = this.clock();
    const held = await this.lease.acquireLease(OUTBOX_RELAY_LEASE, this.holder, 1, started + this.options.leaseMs, started);
    try {
      if (!held) return null;
      let relayed = 0;
      // Half the lease at most, so the pass ends before another process may take the lease over.
      while (this.clock() - started < this.options.leaseMs / 2) {
        const due = await this.store.listOutboxEvents(this.overdueBefore(), this.options.batchSize);
        if (due.length === 0) break;
        const delivered = await this.publishAndDelete(due, 'relay', RELAY_FAILED_KEYS);
        relayed += delivered;
        if (delivered < due.length) break;
      }
      return relayed;
    } finally {
      if (held) await this.lease.releaseLease(OUTBOX_RELAY_LEASE, this.holder);
      // Every process reports the overdue events (those the relay should have taken), so no gauge
      // keeps the count of a lease it no longer holds; events a stage is still publishing are not counted.
      this.telemetry.waiting(await this.store.countOutboxEvents(this.overdueBefore()));
    }
  }

  /** Events committed before this (ISO-8601) are the relay's: no stage is publishing them any more. */
  private overdueBefore(): string {
    return new Date(this.clock() - this.options.relayAfterMs).toISOString();
  }

  /**
   * Publishes in order, skipping the rest of a key once one of its events fails, and stopping
   * once `failedKeys` keys have failed; deletes what was published.
   */
  private async publishAndDelete(events: readonly OutboxEvent[], by: 'stage' | 'relay', failedKeys = Number.POSITIVE_INFINITY): Promise<number> {
    const delivered: string[] = [];
    const blocked = new Set<string>();
    let failure: Error | undefined;
    for (const [i, event] of events.entries()) {
      if (i > 0 && i % PUBLISHES_PER_TURN === 0) await yieldToEventLoop();
      if (blocked.size >= failedKeys) break;
      if (blocked.has(event.key)) continue;
      try {
        await this.bus.publish(event.topic, event.key, decodePayload(event.topic, event.payload), { ...event.headers });
        delivered.push(event.id);
      } catch (error) {
        blocked.add(event.key);
        failure = toError(error);
      }
    }
    if (failure !== undefined) this.telemetry.failed(by, events.length - delivered.length, failure);
    if (delivered.length === 0) return 0;
    this.telemetry.published(by, delivered.length);
    // Published but not deleted (the store is unreachable): the relay publishes them again later,
    // which the idempotent consumers absorb.
    await this.store.deleteOutboxEvents(delivered).catch((error: unknown) => this.telemetry.undeleted(delivered.length, toError(error)));
    return delivered.length;
  }
}
