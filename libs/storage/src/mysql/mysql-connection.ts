import type { DataSource } from 'typeorm';
import type { MysqlConnectionSettings } from './mysql-url';
import { quoteIdentifier } from './mysql-url';
import { PooledSql } from './mysql-session';
import { probeServer } from './mysql-capabilities';
import type { ServerCapabilities } from './mysql-capabilities';

/**
 * Sees every statement a pool sends (the adapter's and TypeORM's own, such as START TRANSACTION)
 * with its parameters, before mysql2 binds them, and returns the text to bind instead. For tests:
 * recording what a TiDB server would receive, and running it on a stand-in.
 */
export type StatementTap = (sql: string, params: readonly unknown[]) => string;

/**
 * A TypeORM pool over mysql2, used for its pooling, transactions and query runners only: no
 * entities, the adapter writes its SQL by hand so TiDB-specific statements stay visible.
 * `database: null` opens a pool on the server without selecting a database. TypeORM is loaded
 * on first use, so standalone (SQLite) processes importing @trellis/storage never pay for it.
 */
export async function createDataSource(
  settings: MysqlConnectionSettings,
  database: string | null,
  poolSize: number,
  tap?: StatementTap,
): Promise<DataSource> {
  const { DataSource } = await import('typeorm');
  const { format } = await import('mysql2');
  return new DataSource({
    type: 'mysql',
    connectorPackage: 'mysql2',
    host: settings.host,
    port: settings.port,
    username: settings.username,
    password: settings.password,
    ...(database === null ? {} : { database }),
    poolSize,
    // Timestamps as text in UTC (see toSqlTime in mysql-dialect), exact integers where they fit.
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: false,
    ...(settings.ssl ? { ssl: { minVersion: 'TLSv1.2', rejectUnauthorized: true } } : {}),
    // JSON as text on every server: TiDB sends a JSON type MariaDB does not have.
    extra: {
      jsonStrings: true,
      // mysql2 binds parameters client-side; its queryFormat hook is the one place every statement passes.
      ...(tap ? { queryFormat: tappedFormat(format, tap) } : {}),
    },
    synchronize: false,
    migrationsRun: false,
    logging: false,
    entities: [],
  });
}

type Format = typeof import('mysql2').format;

/** mysql2's own binding (as without a tap), applied to the statement the tap returns. */
function tappedFormat(format: Format, tap: StatementTap) {
  return (sql: string, values: Parameters<Format>[1], timezone?: Parameters<Format>[3]): string =>
    format(tap(sql, Array.isArray(values) ? values : []), values, false, timezone);
}

/**
 * Probes the server and creates the database when it is missing. Checks before creating, so a
 * user allowed to use an existing database but not to create one still connects.
 */
export async function prepareServer(settings: MysqlConnectionSettings, createDatabase: boolean, tap?: StatementTap): Promise<ServerCapabilities> {
  const bootstrap = await createDataSource(settings, null, 1, tap);
  await bootstrap.initialize();
  try {
    const sql = new PooledSql(bootstrap);
    const capabilities = await probeServer(sql);
    if (createDatabase) {
      const existing = await sql.rows('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [settings.database]);
      if (existing.length === 0) {
        await sql.exec(`CREATE DATABASE IF NOT EXISTS ${quoteIdentifier(settings.database)} CHARACTER SET utf8mb4 COLLATE ${capabilities.collation}`);
      }
    }
    return capabilities;
  } finally {
    await bootstrap.destroy();
  }
}
