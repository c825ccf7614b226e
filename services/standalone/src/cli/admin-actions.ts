import { ALL_TOPICS } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import { loadConfig } from '@trellis/config';
import type { TrellisConfig } from '@trellis/config';
import { KafkaEventBus, ensureKafkaTopics } from '@trellis/messaging';
import { createLogger } from '@trellis/observability';
import { kafkaBusConfig } from '@trellis/runtime';
import { migrateMysql } from '@trellis/storage';
import { table } from './output';

// The infrastructure commands of admin-commands.ts: they talk to TiDB and Kafka directly.

/** `trellis migrate`: applies the database migrations to TRELLIS_DB_URL. */
export async function migrate(): Promise<void> {
  const { dbUrl } = infraConfig();
  if (!dbUrl) throw new Error('TRELLIS_DB_URL is required (mysql://user:password@host:port/database)');
  const applied = await migrateMysql(dbUrl, { logger: quietLogger() });
  process.stdout.write(applied.length === 0 ? 'database schema is up to date\n' : `applied migrations: ${applied.join(', ')}\n`);
}

/** `trellis topics ensure`: creates the indexing topics and their dead-letter topics where missing. */
export async function ensureTopics(): Promise<void> {
  const created = await ensureKafkaTopics(busConfig());
  process.stdout.write(created.length === 0 ? 'all topics exist\n' : `created topics: ${created.join(', ')}\n`);
}

/** `trellis dlq list <topic>`. */
export async function listDeadLetters(topicName: unknown): Promise<void> {
  const topic = topicArgument(topicName);
  await withBus(async (bus) => {
    const letters = await bus.deadLetters(topic);
    if (letters.length === 0) return void process.stdout.write(`no dead letters on ${topic}.dlq\n`);
    process.stdout.write(`${table([['KEY', 'GROUP', 'ATTEMPTS', 'FAILED AT', 'ERROR'], ...letters.map((l) => [l.key, l.group, String(l.attempts), l.failedAt, l.error])])}\n`);
  });
}

/** `trellis dlq replay <topic>`. */
export async function replayDeadLetters(topicName: unknown): Promise<void> {
  const topic = topicArgument(topicName);
  await withBus(async (bus) => {
    process.stdout.write(`replayed ${await bus.replayDeadLetters(topic)} event(s) to ${topic}\n`);
  });
}

/** The infrastructure settings alone: mode checks do not apply to one-off admin commands. */
function infraConfig(): TrellisConfig {
  return loadConfig({ ...process.env, TRELLIS_MODE: 'standalone' }, 'trellis-cli');
}

function busConfig() {
  const config = infraConfig();
  if (config.kafkaBrokers.length === 0) throw new Error('KAFKA_BROKERS is required (host:port,...)');
  return kafkaBusConfig(config, quietLogger());
}

async function withBus(action: (bus: KafkaEventBus) => Promise<void>): Promise<void> {
  const bus = new KafkaEventBus(busConfig());
  try {
    await action(bus);
  } finally {
    await bus.stop();
  }
}

function topicArgument(value: unknown): TopicName {
  const topic = String(value).replace(/\.dlq$/, '');
  if (!(ALL_TOPICS as readonly string[]).includes(topic)) throw new Error(`unknown topic "${topic}": use one of ${ALL_TOPICS.join(', ')}`);
  return topic as TopicName;
}

function quietLogger() {
  return createLogger('trellis-cli', process.env.TRELLIS_LOG_LEVEL ?? 'warn');
}
