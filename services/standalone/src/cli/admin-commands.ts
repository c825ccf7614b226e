import type { Command } from 'commander';
import type * as AdminActions from './admin-actions';

/** The actions' code (Kafka, MySQL, logging) is loaded when one runs, not at every CLI start. */
function actions(): typeof AdminActions {
  /* eslint-disable-next-line @typescript-eslint/no-require-imports */
  return require('./admin-actions') as typeof AdminActions;
}

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
    .action(run(() => actions().migrate()));

  program
    .command('topics')
    .description('Kafka topics')
    .command('ensure')
    .description('create the indexing topics and their dead-letter topics on KAFKA_BROKERS where missing')
    .action(run(() => actions().ensureTopics()));

  const dlq = program.command('dlq').description('dead-lettered indexing events on Kafka, by topic (document.ingested, chunk.ready, ...)');
  dlq
    .command('list <topic>')
    .description('the dead letters of a topic not yet replayed, with their errors')
    .action(run((...args: unknown[]) => actions().listDeadLetters(args[0])));
  dlq
    .command('replay <topic>')
    .description('publish the dead letters of a topic again (after fixing their cause)')
    .action(run((...args: unknown[]) => actions().replayDeadLetters(args[0])));
}
