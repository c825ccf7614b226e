import { TrellisError } from '@trellis/contracts';
import type { PooledSql } from './mysql-session';
import type { SqlSession } from '../sql/sql-session';
import { MYSQL_MIGRATIONS, SCHEMA_MIGRATIONS_DDL } from './mysql-schema';
import type { MysqlMigration, SchemaContext } from './mysql-schema';
import { toSqlTime } from './mysql-dialect';

/** Seconds a migrate() waits for another process's migrate() of the same database. */
const LOCK_WAIT_SECONDS = 120;

/**
 * Applies the migrations this database has not seen, in version order, and records each in
 * schema_migrations. Two processes migrating at once (pods starting together) serialize on a
 * server-side named lock, so each migration runs once. Resolves to the versions applied now.
 */
export async function applyMigrations(
  sql: PooledSql,
  database: string,
  context: SchemaContext,
  migrations: readonly MysqlMigration[] = MYSQL_MIGRATIONS,
): Promise<number[]> {
  // Lock names are server-wide and at most 64 characters.
  const lockName = `trellis.migrate.${database}`.slice(0, 64);
  return sql.withConnection(async (session) => {
    const [lock] = await session.rows('SELECT GET_LOCK(?, ?) AS locked', [lockName, LOCK_WAIT_SECONDS]);
    if (Number(lock?.locked) !== 1) {
      throw TrellisError.unavailable(`another migration of ${database} held the lock for ${LOCK_WAIT_SECONDS}s`);
    }
    try {
      return await applyPending(session, context, migrations);
    } finally {
      await session.rows('SELECT RELEASE_LOCK(?) AS released', [lockName]);
    }
  });
}

async function applyPending(session: SqlSession, context: SchemaContext, migrations: readonly MysqlMigration[]): Promise<number[]> {
  await session.exec(SCHEMA_MIGRATIONS_DDL(context));
  const applied = new Set((await session.rows('SELECT version FROM schema_migrations')).map((r) => Number(r.version)));
  const appliedNow: number[] = [];
  for (const migration of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(migration.version)) continue;
    for (const statement of migration.statements(context)) await session.exec(statement);
    await migration.dataStep?.(session);
    await session.exec('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
      migration.version,
      migration.name,
      toSqlTime(new Date().toISOString()),
    ]);
    appliedNow.push(migration.version);
  }
  return appliedNow;
}
