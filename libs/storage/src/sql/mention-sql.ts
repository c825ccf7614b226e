import type { KbScope } from '@trellis/contracts';
import { MAX_SUMMARY_MENTIONS } from '@trellis/graph';
import type { Row } from '../row-mappers';
import { groupByOwner, rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';
import type { SqlDialect } from './sql-dialect';

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

/**
 * The chunk ids that mention each of these owners, in chunk id order, by owner in owner order;
 * owners without mentions are left out. Where the dialect joins ids in SQL, one row per owner.
 */
export async function chunkIdsOf(session: SqlSession, dialect: SqlDialect, scope: KbScope, table: MentionTable, ownerIds: readonly string[]): Promise<Map<string, string[]>> {
  const joinedIds = dialect.joinedIds;
  if (joinedIds === null) {
    const rows = await mentionsOf(session, scope, table, 'chunk_id', ownerIds);
    return new Map([...groupByOwner(rows)].map(([owner, mentions]) => [owner, mentions.map((m) => String(m.chunk_id))]));
  }
  const owner = ownerOf(table);
  const sql = (m: string) =>
    `SELECT ${owner} AS owner, ${joinedIds('chunk_id')} AS chunk_ids FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner} IN (${m}) GROUP BY ${owner} ORDER BY ${owner}`;
  const rows = await rowsWhereIn(session, sql, [scope.tenantId, scope.kbId], ownerIds);
  return new Map(rows.map((r) => [String(r.owner), String(r.chunk_ids).split(' ')]));
}

/** One owner's mentions as its row is derived from them. */
export interface SampledMentions {
  /**
   * Its first MAX_SUMMARY_MENTIONS in chunk order (the columns asked for); undefined when none of
   * the chunks that changed is among them, so what they derive is as it was.
   */
  readonly rows: readonly Row[] | undefined;
  /** Its mentions in all. */
  readonly count: number;
  /** The `sum` column summed over all of them, when one was asked for. */
  readonly total: number;
}

export interface SampleOptions {
  /** A column to total over every mention (a relationship's strengths). */
  readonly sum?: string;
  /** The chunks whose mentions changed, when only they did: an owner none of them reaches in its first mentions is not read. */
  readonly changedChunks?: readonly string[];
}

/**
 * The mentions each owner's row is derived from (@trellis/graph's MAX_SUMMARY_MENTIONS, the first
 * in chunk order), with their count and the `sum` column's total over every mention; owners
 * without mentions are left out. Counts come from the mention key alone; owners with few
 * mentions are read in one statement, each of the others in one of its own, and not at all when
 * every changed chunk sorts after its first mentions (the key tells where they end): a hub's
 * thousands of rows are never read.
 */
export async function sampledMentionsOf(session: SqlSession, scope: KbScope, table: MentionTable, columns: string, ownerIds: Iterable<string>, options: SampleOptions = {}): Promise<Map<string, SampledMentions>> {
  const owner = ownerOf(table);
  const params = [scope.tenantId, scope.kbId];
  const inScope = `FROM ${table} WHERE tenant_id = ? AND kb_id = ? AND ${owner}`;
  const totals = await rowsWhereIn(
    session,
    (m) => `SELECT ${owner} AS owner, COUNT(*) AS n${options.sum ? `, SUM(${options.sum}) AS total` : ''} ${inScope} IN (${m}) GROUP BY ${owner}`,
    params,
    [...new Set(ownerIds)],
  );
  const few = groupByOwner(await mentionsOf(session, scope, table, columns, totals.filter((t) => Number(t.n) <= MAX_SUMMARY_MENTIONS).map((t) => String(t.owner))));
  const out = new Map<string, SampledMentions>();
  for (const t of totals) {
    const id = String(t.owner);
    let rows = few.get(id);
    if (rows === undefined) {
      const [last] = await session.rows(`SELECT chunk_id ${inScope} = ? ORDER BY chunk_id LIMIT 1 OFFSET ${MAX_SUMMARY_MENTIONS - 1}`, [...params, id]);
      const end = String(last?.chunk_id ?? '');
      const reached = options.changedChunks === undefined || options.changedChunks.some((chunkId) => chunkId <= end);
      if (reached) rows = await session.rows(`SELECT ${owner} AS owner, ${columns} ${inScope} = ? ORDER BY chunk_id LIMIT ${MAX_SUMMARY_MENTIONS}`, [...params, id]);
    }
    out.set(id, { rows, count: Number(t.n), total: Number(t.total ?? 0) });
  }
  return out;
}

/** Whether any mention of the entity describes it: its review flag, when its first mentions only name it. */
export async function describedEntity(session: SqlSession, scope: KbScope, entityId: string): Promise<boolean> {
  const rows = await session.rows('SELECT 1 AS found FROM entity_mentions WHERE tenant_id = ? AND kb_id = ? AND entity_id = ? AND needs_review = 0 LIMIT 1', [scope.tenantId, scope.kbId, entityId]);
  return rows.length > 0;
}
