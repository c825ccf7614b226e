import type { KbScope } from '@trellis/contracts';
import type { PendingSummary, SummaryUpdate } from '@trellis/graph';
import type { EntityCandidate } from '../records';
import { ENTITY_COLUMNS, toEntity, toPendingSummaries } from '../row-mappers';
import type { Row } from '../row-mappers';
import { recordEntityChanges, recordRelationshipChanges } from './community-change-sql';
import { mentionsOf } from './mention-sql';
import type { MentionTable } from './mention-sql';
import type { SqlDialect } from './sql-dialect';
import { groupByOwner, rowsWhereIn } from './sql-session';
import type { SqlDatabase, SqlSession } from './sql-session';

/** Entity resolution candidates and the summaries the graph writer recomputes. */

/**
 * Keeps a summary whose inputs hash (first parameter) is unchanged; otherwise writes the plain
 * concatenation (second) and marks it pending (third: the hash again) for the graph writer to
 * summarise and embed. summary_hash must be assigned after this: MySQL assigns left to right.
 */
export const CHANGED_SUMMARY = `description = CASE WHEN summary_hash = ? THEN description ELSE ? END,
  summary_pending = CASE WHEN summary_hash = ? THEN summary_pending ELSE 1 END`;

export async function listEntityCandidates(session: SqlSession, dialect: SqlDialect, scope: KbScope, normalizedNames: readonly string[]): Promise<EntityCandidate[]> {
  const sql = (m: string) => `SELECT ${ENTITY_COLUMNS}, embedding FROM entities WHERE tenant_id = ? AND kb_id = ? AND normalized_name IN (${m})`;
  const rows = await rowsWhereIn(session, sql, [scope.tenantId, scope.kbId], [...new Set(normalizedNames)]);
  const out = rows.map((row) => ({ entity: toEntity(row), embedding: dialect.readEmbedding(row.embedding) ?? new Float32Array(0) }));
  return out.sort((a, b) => (a.entity.id < b.entity.id ? -1 : a.entity.id > b.entity.id ? 1 : 0));
}

export async function listPendingSummaries(session: SqlSession, scope: KbScope, limit: number): Promise<PendingSummary[]> {
  const params = [scope.tenantId, scope.kbId];
  // An integer literal: not every server accepts a bound LIMIT.
  const top = Math.max(0, Math.floor(limit));
  const entities = await session.rows(`SELECT id, name, type, summary_hash FROM entities WHERE tenant_id = ? AND kb_id = ? AND summary_pending = 1 ORDER BY id LIMIT ${top}`, params);
  const relationships = await session.rows(
    `SELECT r.id, r.label, r.summary_hash, s.name AS source_name, t.name AS target_name FROM relationships r
     JOIN entities s ON s.tenant_id = r.tenant_id AND s.kb_id = r.kb_id AND s.id = r.source_id
     JOIN entities t ON t.tenant_id = r.tenant_id AND t.kb_id = r.kb_id AND t.id = r.target_id
     WHERE r.tenant_id = ? AND r.kb_id = ? AND r.summary_pending = 1 ORDER BY r.id LIMIT ${top}`,
    params,
  );
  const descriptions = async (table: MentionTable, rows: Row[]) => groupByOwner(await mentionsOf(session, scope, table, 'description', rows.map((r) => String(r.id))));
  const byKind = { entity: await descriptions('entity_mentions', entities), relationship: await descriptions('relationship_mentions', relationships) };
  return toPendingSummaries(entities, relationships, (kind, id) => (byKind[kind].get(id) ?? []).map((m) => String(m.description)));
}

/**
 * One compare-and-set update per row (a summary computed from mentions that changed since is
 * dropped), all in one transaction: a refresh saves up to a page of entities and one of
 * relationships, and as statements of their own each paid a commit (on SQLite, a WAL append of
 * every page it touched) — more than the update itself. The rows are taken in the graph
 * writes' lock order: entities by id, relationships by id, then their community change records.
 */
export async function saveSummaries(db: SqlDatabase, dialect: SqlDialect, scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number> {
  if (updates.length === 0) return 0;
  const byId = (a: SummaryUpdate, b: SummaryUpdate) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const entities = updates.filter((u) => u.kind === 'entity').sort(byId);
  const relationships = updates.filter((u) => u.kind === 'relationship').sort(byId);
  return db.transaction(async (tx) => {
    let saved = 0;
    for (const u of [...entities, ...relationships]) {
      const table = u.kind === 'entity' ? 'entities' : 'relationships';
      // A description the user set by hand (graph_overlays) wins over the derived summary.
      saved += await tx.exec(
        `UPDATE ${table} SET description = COALESCE((SELECT o.description FROM graph_overlays o
           WHERE o.tenant_id = ? AND o.kb_id = ? AND o.target_kind = ? AND o.target_id = ?), ?),
         embedding = ?, summary_pending = 0 WHERE ${dialect.byIdScope()} AND id = ? AND summary_hash = ?`,
        [scope.tenantId, scope.kbId, u.kind, u.id, u.description, dialect.embeddingValue(u.embedding), scope.tenantId, scope.kbId, u.id, u.summaryHash],
      );
    }
    // In the same transaction as the summaries, so no saved summary goes unrecorded.
    await recordEntityChanges(tx, dialect, scope, entities.map((u) => u.id));
    await recordRelationshipChanges(tx, dialect, scope, relationships.map((u) => u.id));
    return saved;
  });
}

export async function listScopesWithPendingSummaries(session: SqlSession): Promise<KbScope[]> {
  const rows = await session.rows(
    'SELECT tenant_id, kb_id FROM entities WHERE summary_pending = 1 UNION SELECT tenant_id, kb_id FROM relationships WHERE summary_pending = 1 ORDER BY 1, 2',
  );
  return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
}
