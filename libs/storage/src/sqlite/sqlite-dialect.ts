import type { SqlDialect } from '../sql/sql-dialect';
import { bufferToVector, vectorToBuffer } from '@trellis/vectors';

/**
 * SQLite's pieces of the shared statements. Transactions run one at a time on the store's single
 * connection (see SqliteDatabase), so nothing is locked row by row.
 */
export const sqliteDialect: SqlDialect = {
  // Without a conflict target the clause covers every unique key, as ON DUPLICATE KEY does.
  onConflictUpdate: (assignments) => `ON CONFLICT DO UPDATE SET ${assignments}`,
  inserted: (column) => `excluded.${column}`,
  onConflictKeep: () => 'ON CONFLICT DO NOTHING',
  insertIgnore: 'INSERT OR IGNORE',
  locksRows: false,
  forUpdate: '',
  least: (a, b) => `MIN(${a}, ${b})`,
  greatest: (a, b) => `MAX(${a}, ${b})`,
  time: (iso) => iso,
  // The unary plus keeps SQLite from choosing a (tenant_id, kb_id, ...) index, which would scan
  // the whole knowledge base, over the primary key.
  byIdScope: (alias) => `+${alias ? `${alias}.` : ''}tenant_id = ? AND +${alias ? `${alias}.` : ''}kb_id = ?`,
  indexedBy: (index) => ` INDEXED BY ${index}`,
  joinedIds: (column) => `group_concat(${column}, ' ' ORDER BY ${column})`,
  isDuplicateKey: (error) => (error as { code?: unknown } | null)?.code?.toString().startsWith('SQLITE_CONSTRAINT') === true,
  embeddingValue: (vector) => vectorToBuffer(vector),
  readEmbedding: (value) => (value === null || value === undefined ? null : bufferToVector(value as Buffer)),
};
