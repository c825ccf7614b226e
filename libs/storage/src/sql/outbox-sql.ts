import type { OutboxEvent, TopicName } from '@trellis/contracts';
import type { OutboxRepository, StoredOutboxEvent } from '../repositories/outbox.repository';
import { batches, fromSqlTime, readJson } from '../row-mappers';
import type { SqlDialect } from './sql-dialect';
import { SqlRepository } from './sql-engine';
import { execWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

/** Rows per INSERT: seven parameters each, well under SQLite's cap on bound parameters. */
const ROWS_PER_INSERT = 100;

/**
 * Writes events into the outbox in the caller's transaction: they commit, or roll back, with
 * the change they announce. Appended in order, so the relay publishes them in that order.
 */
export async function appendOutboxEvents(tx: SqlSession, dialect: SqlDialect, events: readonly OutboxEvent[]): Promise<void> {
  const at = dialect.time(new Date().toISOString());
  for (const batch of batches(events, ROWS_PER_INSERT)) {
    await tx.exec(
      `INSERT INTO outbox_events (id, topic, event_key, payload, headers, created_at) VALUES ${batch.map(() => '(?, ?, ?, ?, ?, ?)').join(', ')}`,
      batch.flatMap((e) => [e.id, e.topic, e.key, Buffer.from(e.payload.buffer, e.payload.byteOffset, e.payload.byteLength), JSON.stringify(e.headers), at]),
    );
  }
}

/** The outbox seen by its publisher and relay: events waiting to be published, across every tenant. */
export class SqlOutbox extends SqlRepository implements OutboxRepository {
  /** Events that announce no change of their own (a re-announcement), in a transaction of their own. */
  async appendOutboxEvents(events: readonly OutboxEvent[]): Promise<void> {
    if (events.length > 0) await this.db.transaction((tx) => appendOutboxEvents(tx, this.dialect, events));
  }

  async listOutboxEvents(before: string, limit: number): Promise<StoredOutboxEvent[]> {
    // An integer literal: not every server accepts a bound LIMIT.
    const rows = await this.db.rows(
      `SELECT id, topic, event_key, payload, headers, created_at FROM outbox_events WHERE created_at < ? ORDER BY seq LIMIT ${Math.max(1, Math.floor(limit))}`,
      [this.dialect.time(before)],
    );
    return rows.map((r) => ({
      id: String(r.id),
      topic: String(r.topic) as TopicName,
      key: String(r.event_key),
      payload: new Uint8Array(r.payload as Buffer),
      headers: readJson<Record<string, string>>(r.headers),
      createdAt: fromSqlTime(r.created_at),
    }));
  }

  deleteOutboxEvents(ids: readonly string[]): Promise<number> {
    return execWhereIn(this.db, (marks) => `DELETE FROM outbox_events WHERE id IN (${marks})`, [], ids);
  }

  async countOutboxEvents(before?: string): Promise<number> {
    const [row] =
      before === undefined
        ? await this.db.rows('SELECT COUNT(*) AS n FROM outbox_events')
        : await this.db.rows('SELECT COUNT(*) AS n FROM outbox_events WHERE created_at < ?', [this.dialect.time(before)]);
    return Number(row?.n ?? 0);
  }
}
