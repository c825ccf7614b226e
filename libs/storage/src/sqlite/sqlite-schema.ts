import type Database from 'better-sqlite3';
import { sourceHash } from '../sql/document-sql';
import { entityNameTerms } from '../sql/entity-name-terms-sql';
import { renderMigrations, resolveTable } from '../sql/schema/migration-plan';
import type { DdlRenderer, ResolvedIndex, ResolvedTable } from '../sql/schema/migration-plan';
import { forEngine } from '../sql/schema/table-spec';
import type { ColumnSpec } from '../sql/schema/table-spec';
import { SCHEMA_MIGRATIONS } from '../sql/schema/tables';

/** A one-column key is declared on its column, as the first schema did (an INTEGER one is the rowid). */
function column(name: string, c: ColumnSpec, key = false): string {
  if (c.serial) return `${name} INTEGER PRIMARY KEY AUTOINCREMENT`;
  const value = c.default === undefined ? undefined : forEngine(c.default, 'sqlite');
  return `${name} ${c.sqlite}${key ? ' PRIMARY KEY' : c.nullable ? '' : ' NOT NULL'}${value === undefined ? '' : ` DEFAULT ${value}`}`;
}

/** Prefix lengths are the MySQL family's: SQLite indexes whole values. */
const columnList = (columns: readonly string[]) => columns.map((c) => c.replace(/\(\d+\)$/, '')).join(', ');

function createIndex(table: string, i: ResolvedIndex): string {
  return `CREATE ${i.unique ? 'UNIQUE ' : ''}INDEX ${i.name} ON ${table} (${columnList(i.columns)})${i.where === undefined ? '' : ` WHERE ${i.where}`}`;
}

/** A table with unique keys inline (as the first schema had them), then its other indexes. */
function createTable(t: ResolvedTable, ifNotExists = false): string[] {
  const inline = t.primaryKey.length === 1 ? t.primaryKey[0] : undefined;
  const body = [
    ...t.columns.map(([name, c]) => column(name, c, name === inline)),
    ...(inline === undefined ? [`PRIMARY KEY (${columnList(t.primaryKey)})`] : []),
    ...t.indexes.filter((i) => i.unique).map((i) => `UNIQUE (${columnList(i.columns)})`),
  ];
  return [`CREATE TABLE ${ifNotExists ? 'IF NOT EXISTS ' : ''}${t.name} (${body.join(', ')})`, ...t.indexes.filter((i) => !i.unique).map((i) => createIndex(t.name, i))];
}

/** The standalone store's DDL. */
const sqliteDdl: DdlRenderer = {
  engine: 'sqlite',
  createTable: (t) => createTable(t),
  addToTable(table, columns, indexes, dropped) {
    return [...columns.map(([name, c]) => `ALTER TABLE ${table} ADD COLUMN ${column(name, c)}`), ...indexes.map((i) => createIndex(table, i)), ...dropped.map((name) => `DROP INDEX ${name}`)];
  },
};

/**
 * Versioned schema of the standalone store. A migration runs once, in order, inside a
 * transaction; the applied versions are recorded in schema_migrations.
 */
export const SQLITE_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = renderMigrations(sqliteDdl).map((m) => ({
  version: m.version,
  name: m.name,
  sql: m.statements.map((s) => `${s};`).join('\n'),
}));

/** Applies the migrations this file has not seen, each in its own transaction. */
export function migrateSqlite(db: Database.Database): void {
  // Migration 11 derives the source hashes of existing documents as the store computes them.
  db.function('trellis_source_hash', { deterministic: true }, (uri) => sourceHash(String(uri)));
  // Migration 21 splits the names of existing entities as the store's writes split them.
  db.table('trellis_name_terms', {
    columns: ['term'],
    parameters: ['name'],
    *rows(name: unknown) {
      for (const term of entityNameTerms(String(name))) yield { term };
    },
  });
  db.exec(createTable(resolveTable(SCHEMA_MIGRATIONS, 'sqlite'), true)[0]!);
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as Array<{ version: number }>).map((r) => r.version));
  for (const migration of SQLITE_MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, new Date().toISOString());
    })();
  }
}
