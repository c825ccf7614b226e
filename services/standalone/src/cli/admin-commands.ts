import type { Command } from 'commander';
import { ALL_TOPICS } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import { loadConfig } from '@trellis/config';
import type { TrellisConfig } from '@trellis/config';
import { KafkaEventBus, ensureKafkaTopics } from '@trellis/messaging';
import { createLogger } from '@trellis/observability';
import { kafkaBusConfig } from '@trellis/runtime';
import { migrateMysql } from '@trellis/storage';
import { table } from './output';

/**
 * Operations on a distributed deployment's infrastructure, run as Kubernetes Jobs or by an
 * operator: they talk to TiDB and Kafka directly (TRELLIS_DB_URL, KAFKA_BROKERS), not to a
 * Trellis server.
 */
type AdminAction = (...args: unknown[]) => Promise<number | void>;

export function addAdminCommands(program: Command, run: (action: AdminAction) => (...args: unknown[]) => Promise<void>): void {
  program
    .command('migrate')
    .description('apply the database migrations to TRELLIS_DB_URL (TiDB or another MySQL-protocol server)')
    .action(
      run(async () => {
        const { dbUrl } = infraConfig();
        if (!dbUrl) throw new Error('TRELLIS_DB_URL is required (mysql://user:password@host:port/database)');
        const applied = await migrateMysql(dbUrl, { logger: quietLogger() });
        process.stdout.write(applied.length === 0 ? 'database schema is up to date\n' : `applied migrations: ${applied.join(', ')}\n`);
      }),
    );

  program
    .command('topics')
    .description('Kafka topics')
    .command('ensure')
    .description('create the indexing topics and their dead-letter topics on KAFKA_BROKERS where missing')
    .action(
      run(async () => {
        const created = await ensureKafkaTopics(busConfig());
        process.stdout.write(created.length === 0 ? 'all topics exist\n' : `created topics: ${created.join(', ')}\n`);
      }),
    );

  const dlq = program.command('dlq').description(`dead-lettered indexing events on Kafka (topics: ${ALL_TOPICS.join(', ')})`);
  dlq
    .command('list <topic>')
    .description('the dead letters of a topic not yet replayed, with their errors')
    .action(
      run(async (...args: unknown[]) => {
        const topic = topicArgument(args[0]);
        await withBus(async (bus) => {
          const letters = await bus.deadLetters(topic);
          if (letters.length === 0) return void process.stdout.write(`no dead letters on ${topic}.dlq\n`);
          process.stdout.write(`${table([['KEY', 'GROUP', 'ATTEMPTS', 'FAILED AT', 'ERROR'], ...letters.map((l) => [l.key, l.group, String(l.attempts), l.failedAt, l.error])])}\n`);
        });
      }),
    );
  dlq
    .command('replay <topic>')
    .description('publish the dead letters of a topic again (after fixing their cause)')
    .action(
      run(async (...args: unknown[]) => {
        const topic = topicArgument(args[0]);
        await withBus(async (bus) => {
          process.stdout.write(`replayed ${await bus.replayDeadLetters(topic)} event(s) to ${topic}\n`);
        });
      }),
    );
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
