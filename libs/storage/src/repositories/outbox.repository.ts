import type { OutboxEvent } from '@trellis/contracts';

/** An outbox event as stored: with the time its change committed. */
export interface StoredOutboxEvent extends OutboxEvent {
  readonly createdAt: string;
}

/**
 * The transactional outbox: events written in the transaction of the change they announce
 * (see the `announce` arguments of the document and chunk repositories), deleted once the
 * broker has them. Deployment-wide, like the sweeper: one relay publishes every tenant's.
 */
export interface OutboxRepository {
  /** Events that go with no change of their own (a re-announcement of stored work). */
  appendOutboxEvents(events: readonly OutboxEvent[]): Promise<void>;
  /** Events committed before `before` (ISO-8601), in the order they were written, at most `limit`. */
  listOutboxEvents(before: string, limit: number): Promise<StoredOutboxEvent[]>;
  /** Resolves to how many of `ids` were still there. */
  deleteOutboxEvents(ids: readonly string[]): Promise<number>;
  /** Events waiting; with `before` (ISO-8601), only those committed before it. */
  countOutboxEvents(before?: string): Promise<number>;
}
