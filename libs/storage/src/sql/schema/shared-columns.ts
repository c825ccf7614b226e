import { ID, INT, TEXT, withDefault } from './table-spec';

/** Columns and keys most tables share (see tables.ts for the conventions). */
export const SCOPE = { tenant_id: ID, kb_id: ID };
export const SCOPED_ID = { ...SCOPE, id: ID };
/** SQLite's first tables were keyed by id alone; the MySQL family's keys lead with the scope. */
export const BY_ID = { sqlite: ['id'], mysql: ['tenant_id', 'kb_id', 'id'] };
export const EMPTY = withDefault(TEXT, "''");
export const ZERO = (column = INT) => withDefault(column, '0');
