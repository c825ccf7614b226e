import type { KbScope } from '@trellis/contracts';
import { batches } from '../row-mappers';
import type { SqlDialect } from './sql-dialect';
import { rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

/**
 * The graph-change records communities are refreshed from (table community_changes). Every
 * write that changes what a community report is made of — an entity's name, type or
 * description, or any relationship it takes part in (added, removed, re-weighted, re-described,
 * moved by a merge) — records the entities whose content hash it changes, in the transaction of
 * the change. A relationship changes the content of both its ends, so both are recorded: with
 * that, every community whose content changed holds a recorded entity, which is what lets a
 * refresh start from these records instead of re-hashing the whole graph.
 */
export async function recordEntityChanges(session: SqlSession, dialect: SqlDialect, scope: KbScope, entityIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(entityIds)].sort();
  for (const batch of batches(ids, 200)) {
    await session.exec(
      `INSERT INTO community_changes (tenant_id, kb_id, entity_id, version) VALUES ${batch.map(() => '(?, ?, ?, 1)').join(', ')}
       ${dialect.onConflictUpdate('version = version + 1')}`,
      batch.flatMap((id) => [scope.tenantId, scope.kbId, id]),
    );
  }
}

/** Records both ends of these relationships (read before they change; a relationship gone records nothing). */
export async function recordRelationshipChanges(session: SqlSession, dialect: SqlDialect, scope: KbScope, relationshipIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(relationshipIds)];
  if (ids.length === 0) return;
  const sql = (m: string) => `SELECT source_id, target_id FROM relationships WHERE ${dialect.byIdScope()} AND id IN (${m})`;
  const rows = await rowsWhereIn(session, sql, [scope.tenantId, scope.kbId], ids);
  await recordEntityChanges(session, dialect, scope, rows.flatMap((r) => [String(r.source_id), String(r.target_id)]));
}
