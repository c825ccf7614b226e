/**
 * The typed description the schema is written in, once for both engines. Each engine renders
 * it to its own DDL (sqlite/sqlite-schema.ts, mysql/mysql-schema.ts); migration-plan.ts works
 * out which tables, columns and indexes each numbered migration introduces.
 */
export type Engine = 'sqlite' | 'mysql';

/** One value for both engines, or one for each (where the two histories differ). */
export type PerEngine<T> = T | { readonly sqlite: T; readonly mysql: T };

function isPerEngine<T>(value: PerEngine<T>): value is { readonly sqlite: T; readonly mysql: T } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'sqlite' in value && 'mysql' in value;
}

export function forEngine<T>(value: PerEngine<T>, engine: Engine): T {
  return isPerEngine(value) ? value[engine] : value;
}

export interface ColumnSpec {
  /** The MySQL-family type; embeddings take the server's (VECTOR on TiDB, MEDIUMBLOB elsewhere). */
  readonly mysql: string;
  readonly sqlite: 'TEXT' | 'INTEGER' | 'REAL' | 'BLOB';
  /** TEXT, BLOB and JSON: the MySQL family takes no DEFAULT for them (TiDB refuses one). */
  readonly blob?: true;
  /** An auto-incremented integer key. */
  readonly serial?: true;
  readonly embedding?: true;
  readonly nullable?: true;
  /** SQL literal; a per-engine undefined means none on that engine. */
  readonly default?: PerEngine<string | undefined>;
  /** The migration that added the column, where later than its table's. */
  readonly since?: PerEngine<number>;
}

export interface IndexSpec {
  readonly name: string;
  /** MySQL prefix lengths (`name(191)`) are dropped on SQLite. */
  readonly columns: PerEngine<readonly string[]>;
  readonly unique?: true;
  /** A partial index's condition: SQLite only (the MySQL family indexes every row). */
  readonly where?: string;
  readonly since?: PerEngine<number>;
  /** The migration that dropped the index (a wider one took its place). */
  readonly until?: PerEngine<number>;
  readonly only?: Engine;
}

export interface TableSpec {
  readonly name: string;
  readonly columns: Readonly<Record<string, ColumnSpec>>;
  readonly primaryKey: PerEngine<readonly string[]>;
  readonly indexes?: readonly IndexSpec[];
  /** The migration that created the table (default 1). */
  readonly since?: PerEngine<number>;
  readonly only?: Engine;
}

const type = (mysql: string, sqlite: ColumnSpec['sqlite'], blob = false): ColumnSpec => (blob ? { mysql, sqlite, blob: true } : { mysql, sqlite });

/** Ids compare byte for byte (binary collation on the MySQL family, as in SQLite). */
export const ID = type('VARCHAR(128)', 'TEXT');
export const varchar = (length: number): ColumnSpec => type(`VARCHAR(${length})`, 'TEXT');
export const char = (length: number): ColumnSpec => type(`CHAR(${length})`, 'TEXT');
export const TEXT = type('TEXT', 'TEXT', true);
export const MEDIUMTEXT = type('MEDIUMTEXT', 'TEXT', true);
export const LONGTEXT = type('LONGTEXT', 'TEXT', true);
export const JSON_TEXT = type('JSON', 'TEXT', true);
export const TIME = type('DATETIME(3)', 'TEXT');
export const INT = type('INT', 'INTEGER');
export const BIGINT = type('BIGINT', 'INTEGER');
export const TINYINT = type('TINYINT', 'INTEGER');
export const DOUBLE = type('DOUBLE', 'REAL');
/** Opaque bytes the store keeps as they are (an encoded event). */
export const BYTES = type('MEDIUMBLOB', 'BLOB', true);
export const SERIAL: ColumnSpec = { mysql: 'BIGINT', sqlite: 'INTEGER', serial: true };
export const EMBEDDING: ColumnSpec = { mysql: '', sqlite: 'BLOB', embedding: true, nullable: true };
/** Float32 little-endian bytes on both engines: a vector scored in the service, never by the server. */
export const VECTOR_BYTES: ColumnSpec = { mysql: 'MEDIUMBLOB', sqlite: 'BLOB', blob: true, nullable: true };

export const nullable = (column: ColumnSpec): ColumnSpec => ({ ...column, nullable: true });
export const withDefault = (column: ColumnSpec, value: PerEngine<string | undefined>): ColumnSpec => ({ ...column, default: value });
export const since = (column: ColumnSpec, version: PerEngine<number>): ColumnSpec => ({ ...column, since: version });
