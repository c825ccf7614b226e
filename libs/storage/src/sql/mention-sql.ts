import type { KbScope } from '@trellis/contracts';
import { SummarySample } from '@trellis/graph';
import type { Row } from '../row-mappers';
import { groupByOwner, rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

export type MentionTable = 'entity_mentions' | 'relationship_mentions';

const ownerOf = (table: MentionTable) => (table === 'entity_mentions' ? 'entity_id' : 'relationship_id');

/**
 * The mentions of these owners (entities or relationships) as rows of `owner` and `columns`,
 * ordered by owner, then chunk id: the order summaries are built in and provenance is listed in.
 */
export function mentionsOf(session: SqlSession, scope: KbScope, table: MentionTable, columns: string, ownerIds: Iterable<string>): Promise<Row[]> {
  const owner = ownerOf(table);
  const sql = (m: string) => `SELECT ${owner} AS owner, ${columns} FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner} IN (${m}) ORDER BY ${owner}, chunk_id`;
  return rowsWhereIn(session, sql, [scope.tenantId, scope.kbId], [...ownerIds]);
}

/** One owner's mentions as its row is derived from them. */
export interface SampledMentions {
  /** Its SummarySample (a `description` column is read), in chunk order. */
  readonly rows: readonly Row[];
  /** Its mentions in all. */
  readonly count: number;
  /** The `sum` column summed over all of them, when one was asked for. */
  readonly total: number;
}

/** Mentions an owner with many is read in at a time, in chunk order. */
const PAGE_ROWS = 256;

/**
 * The mentions each owner's row is derived from (@trellis/graph's SummarySample: the first in
 * chunk order, bounded), with their count and, given `sum`, that column's total over every
 * mention. Owners without mentions are left out. The counts come from the mention key alone;
 * owners with few mentions are read in one statement, each of the others a page at a time until
 * its sample is full, so a hub costs a few pages, not its thousands of rows.
 */
export async function sampledMentionsOf(session: SqlSession, scope: KbScope, table: MentionTable, columns: string, ownerIds: Iterable<string>, sum?: string): Promise<Map<string, SampledMentions>> {
  const owner = ownerOf(table);
  const params = [scope.tenantId, scope.kbId];
  const totals = await rowsWhereIn(
    session,
    (m) => `SELECT ${owner} AS owner, COUNT(*) AS n${sum ? `, SUM(${sum}) AS total` : ''} FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner} IN (${m}) GROUP BY ${owner}`,
    params,
    [...new Set(ownerIds)],
  );
  const few = groupByOwner(await mentionsOf(session, scope, table, columns, totals.filter((t) => Number(t.n) <= PAGE_ROWS).map((t) => String(t.owner))));
  const out = new Map<string, SampledMentions>();
  for (const t of totals) {
    const id = String(t.owner);
    const sample = new SummarySample<{ description: string; row: Row }>();
    const take = (rows: readonly Row[]) => rows.every((row) => sample.add({ description: String(row.description), row }));
    if (few.has(id)) take(few.get(id)!);
    else {
      for (let after = ''; ; ) {
        const page = await session.rows(
          `SELECT ${owner} AS owner, chunk_id AS page_key, ${columns} FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner} = ? AND chunk_id > ? ORDER BY chunk_id LIMIT ${PAGE_ROWS}`,
          [...params, id, after],
        );
        if (!take(page) || page.length < PAGE_ROWS) break;
        after = String(page.at(-1)!.page_key);
      }
    }
    out.set(id, { rows: sample.mentions.map((m) => m.row), count: Number(t.n), total: Number(t.total ?? 0) });
  }
  return out;
}

/** Whether any mention of the entity describes it: what its review flag asks when its sample holds only names. */
export async function describedEntity(session: SqlSession, scope: KbScope, entityId: string): Promise<boolean> {
  const rows = await session.rows('SELECT 1 AS found FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id = ? AND needs_review = 0 LIMIT 1', [scope.tenantId, scope.kbId, entityId]);
  return rows.length > 0;
}
