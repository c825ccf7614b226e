import type { EnvReader } from './env-reader';

/** How indexing events travel and where data lives. */
export type RuntimeMode = 'standalone' | 'distributed';

/** Where the process's bus and store are: brokers and a database URL make it distributed. */
export interface Infrastructure {
  readonly mode: RuntimeMode;
  /** TRELLIS_DB_URL: mysql://user:pass@host:port/db for TiDB; unset in standalone (SQLite). */
  readonly dbUrl?: string;
  /** KAFKA_BROKERS: comma-separated host:port list; unset in standalone (in-process bus). */
  readonly kafkaBrokers: readonly string[];
}

/** TRELLIS_MODE when set, otherwise distributed exactly when KAFKA_BROKERS is. */
export function readInfrastructure(env: EnvReader): Infrastructure {
  const kafkaBrokers = (env.text('KAFKA_BROKERS') ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b !== '');
  for (const broker of kafkaBrokers) {
    if (!/^[^:\s]+:\d{1,5}$/.test(broker)) env.problems.push(`KAFKA_BROKERS entry "${broker}" is not host:port`);
  }
  const dbUrl = env.text('TRELLIS_DB_URL');
  if (dbUrl !== undefined && !/^mysql:\/\//.test(dbUrl)) {
    env.problems.push('TRELLIS_DB_URL must start with mysql:// (TiDB or another MySQL-protocol server)');
  }
  const requested = env.text('TRELLIS_MODE');
  if (requested !== undefined && requested !== 'standalone' && requested !== 'distributed') {
    env.problems.push(`TRELLIS_MODE must be "standalone" or "distributed" (got "${requested}")`);
  }
  const mode: RuntimeMode = requested === 'standalone' || requested === 'distributed' ? requested : kafkaBrokers.length > 0 ? 'distributed' : 'standalone';
  if (mode === 'distributed') {
    if (kafkaBrokers.length === 0) env.problems.push('KAFKA_BROKERS is required in distributed mode');
    if (dbUrl === undefined) env.problems.push('TRELLIS_DB_URL is required in distributed mode');
  }
  return { mode, dbUrl, kafkaBrokers };
}
