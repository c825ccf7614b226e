import type { DataSource } from 'typeorm';
import type { MysqlConnectionSettings } from './mysql-url';
import { quoteIdentifier } from './mysql-url';
import { PooledSql } from './mysql-session';
import { probeServer } from './mysql-capabilities';
import type { ServerCapabilities } from './mysql-capabilities';

/**
 * A TypeORM pool over mysql2, used for its pooling, transactions and query runners only: no
 * entities, the adapter writes its SQL by hand so TiDB-specific statements stay visible.
 * `database: null` opens a pool on the server without selecting a database. TypeORM is loaded
 * on first use, so standalone (SQLite) processes importing @trellis/storage never pay for it.
 */
export async function createDataSource(settings: MysqlConnectionSettings, database: string | null, poolSize: number): Promise<DataSource> {
  const { DataSource } = await import('typeorm');
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
    extra: { jsonStrings: true },
    synchronize: false,
    migrationsRun: false,
    logging: false,
    entities: [],
  });
}

/**
 * Probes the server and creates the database when it is missing. Checks before creating, so a
 * user allowed to use an existing database but not to create one still connects.
 */
export async function prepareServer(settings: MysqlConnectionSettings, createDatabase: boolean): Promise<ServerCapabilities> {
  const bootstrap = await createDataSource(settings, null, 1);
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
