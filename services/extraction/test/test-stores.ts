import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import type { TopicName, TopicPayload } from '@trellis/contracts';
import type { EventBus } from '@trellis/messaging';
import { MysqlStore, SqliteStore } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';

/** A store an extraction test runs on, and how to remove what it left behind. */
export interface TestStore {
  readonly store: TrellisStore;
  drop(): Promise<void>;
}

export const sqliteTestStore = async (): Promise<TestStore> => ({ store: new SqliteStore(':memory:'), drop: async () => undefined });

/** A migrated MysqlStore in a fresh database on the server of `baseUrl`; drop() removes the database. */
export async function mysqlTestStore(baseUrl: string): Promise<TestStore> {
  const database = `trellis_test_${randomBytes(6).toString('hex')}`;
  const url = new URL(baseUrl);
  url.pathname = `/${database}`;
  const store = await MysqlStore.connect(url.toString(), { poolSize: 2, logger: { info: () => undefined, warn: () => undefined } });
  await store.migrate();
  return {
    store,
    drop: async () => {
      const base = new URL(baseUrl);
      const admin = await mysql.createConnection({ host: base.hostname, port: Number(base.port || 3306), user: decodeURIComponent(base.username) || 'root', password: decodeURIComponent(base.password) });
      await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await admin.end();
    },
  };
}

/** The event bus as the extraction service sees it, keeping what it publishes. */
export class RecordingBus implements Partial<EventBus> {
  readonly published: Array<{ topic: TopicName; payload: unknown }> = [];
  async publish<T extends TopicName>(topic: T, _key: string, payload: TopicPayload<T>): Promise<void> {
    this.published.push({ topic, payload });
  }
  /** The payloads published on `topic` so far, removed from the record. */
  take(topic: TopicName): unknown[] {
    const taken = this.published.filter((p) => p.topic === topic).map((p) => p.payload);
    this.published.splice(0, this.published.length, ...this.published.filter((p) => p.topic !== topic));
    return taken;
  }
}
