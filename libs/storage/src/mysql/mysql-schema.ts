import { renderMigrations, resolveTable } from '../sql/schema/migration-plan';
import type { DdlRenderer, ResolvedIndex, ResolvedTable } from '../sql/schema/migration-plan';
import { forEngine } from '../sql/schema/table-spec';
import type { ColumnSpec } from '../sql/schema/table-spec';
import { SCHEMA_MIGRATIONS } from '../sql/schema/tables';
import { backfillEntityNameTerms } from '../sql/entity-name-terms-sql';
import type { SqlSession } from '../sql/sql-session';
import { reanalyseChunkTexts } from './fulltext-index';
import { mysqlDialect } from './mysql-dialect';
import { blobVectorSql } from './vector-sql';

/**
 * Versioned schema of the MySQL-family store (TiDB, MariaDB, MySQL), rendered from the table
 * description in sql/schema/.
 *
 * DDL is not transactional on these servers, so a migration is written to be safe to run again
 * where it can (CREATE ... IF NOT EXISTS, one ALTER per table: each applies whole or not at
 * all): a migration interrupted halfway is simply re-run.
 */
export interface SchemaContext {
  /** Binary utf8mb4 collation of every table (the caller picks the no-pad variant where the server has one). */
  collation: string;
  /** Column type of embeddings: VECTOR on TiDB, MEDIUMBLOB elsewhere. */
  embeddingColumnType: string;
}

export interface MysqlMigration {
  version: number;
  name: string;
  statements(context: SchemaContext): string[];
  /** Run after the statements, before the migration is recorded: what SQL alone cannot do here. Safe to run again. */
  dataStep?(session: SqlSession): Promise<void>;
}

/** The migrations' data steps; the dialect's vector path is not needed by any. */
const DATA_STEPS: Readonly<Record<number, (session: SqlSession) => Promise<void>>> = {
  21: (session) => backfillEntityNameTerms(session, mysqlDialect(() => blobVectorSql)),
  24: (session) => reanalyseChunkTexts(session),
};

function renderer(context: SchemaContext): DdlRenderer {
  const column = (name: string, c: ColumnSpec) => {
    const value = c.default === undefined || c.blob ? undefined : forEngine(c.default, 'mysql');
    const type = c.embedding ? context.embeddingColumnType : c.mysql;
    return `${name} ${type}${c.nullable ? ' NULL' : ' NOT NULL'}${c.serial ? ' AUTO_INCREMENT' : ''}${value === undefined ? '' : ` DEFAULT ${value}`}`;
  };
  const key = (i: ResolvedIndex) => `${i.unique ? 'UNIQUE ' : ''}KEY ${i.name} (${i.columns.join(', ')})`;
  const createTable = (t: ResolvedTable) => {
    const body = [...t.columns.map(([name, c]) => column(name, c)), `PRIMARY KEY (${t.primaryKey.join(', ')})`, ...t.indexes.map(key)];
    return [`CREATE TABLE IF NOT EXISTS ${t.name} (${body.join(', ')}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=${context.collation}`];
  };
  return {
    engine: 'mysql',
    createTable,
    addToTable: (table, columns, indexes, dropped) => [
      `ALTER TABLE ${table} ${[...columns.map(([name, c]) => `ADD COLUMN ${column(name, c)}`), ...indexes.map((i) => `ADD ${key(i)}`), ...dropped.map((name) => `DROP KEY ${name}`)].join(', ')}`,
    ],
  };
}

/** The migrations of the MySQL family; `statements` renders one for a server's collation and vector type. */
export const MYSQL_MIGRATIONS: readonly MysqlMigration[] = renderMigrations(renderer({ collation: '', embeddingColumnType: '' })).map(({ version, name }) => ({
  version,
  name,
  statements: (context) => renderMigrations(renderer(context)).find((m) => m.version === version)!.statements,
  ...(DATA_STEPS[version] === undefined ? {} : { dataStep: DATA_STEPS[version] }),
}));

export const SCHEMA_MIGRATIONS_DDL = (context: SchemaContext): string => renderer(context).createTable(resolveTable(SCHEMA_MIGRATIONS, 'mysql'))[0]!;
