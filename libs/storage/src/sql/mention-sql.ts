import type { KbScope } from '@trellis/contracts';
import type { Row } from '../row-mappers';
import { rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

export type MentionTable = 'entity_mentions' | 'relationship_mentions';

/**
 * The mentions of these owners (entities or relationships) as rows of `owner` and `columns`,
 * ordered by owner, then chunk id: the order summaries are built in and provenance is listed in.
 */
export function mentionsOf(session: SqlSession, scope: KbScope, table: MentionTable, columns: string, ownerIds: Iterable<string>): Promise<Row[]> {
  const owner = table === 'entity_mentions' ? 'entity_id' : 'relationship_id';
  const sql = (m: string) => `SELECT ${owner} AS owner, ${columns} FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner} IN (${m}) ORDER BY ${owner}, chunk_id`;
  return rowsWhereIn(session, sql, [scope.tenantId, scope.kbId], [...ownerIds]);
}
