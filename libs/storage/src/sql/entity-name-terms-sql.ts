import type { KbScope } from '@trellis/contracts';
import { cutTerm, fullTextTerms } from '@trellis/text-search';
import { batches, compareIds, marks } from '../row-mappers';
import type { SqlDialect } from './sql-dialect';
import { execWhereIn, rowsWhereIn } from './sql-session';
import type { SqlSession } from './sql-session';

/**
 * The words of entity names (table entity_name_terms): what finds entities by name as index
 * ranges. Every write that creates, renames or deletes an entity brings the words of the
 * entities it touched in line, in its own transaction (syncEntityNameTerms).
 */

/** Shortest last word also looked up as the start of a name's word: a shorter one would read a large share of the index. */
export const MIN_PREFIX_LENGTH = 3;

/** The terms an entity is found by: the query words (fullTextTerms) of its normalised name, cut to the column's length. */
export function entityNameTerms(normalizedName: string): string[] {
  return [...new Set(fullTextTerms(normalizedName).map(cutTerm))];
}

/**
 * Rewrites the terms of these entities where they no longer match the rows (an entity created,
 * renamed or deleted); an entity whose terms are right costs two indexed reads and no write.
 * Called once the rows are final. Where transactions run at once, the writer holds the entity
 * rows' locks, so no two transactions rewrite one entity's terms together.
 */
export async function syncEntityNameTerms(tx: SqlSession, dialect: SqlDialect, scope: KbScope, entityIds: Iterable<string>): Promise<void> {
  const ids = [...new Set(entityIds)].sort(compareIds);
  if (ids.length === 0) return;
  const key = [scope.tenantId, scope.kbId];
  const wanted = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const row of await rowsWhereIn(tx, (m) => `SELECT id, normalized_name FROM entities WHERE ${dialect.byIdScope()} AND id IN (${m})`, key, ids)) {
    wanted.set(String(row.id), entityNameTerms(String(row.normalized_name)));
  }
  const held = new Map<string, Set<string>>(ids.map((id) => [id, new Set()]));
  const sql = (m: string) => `SELECT entity_id, term FROM entity_name_terms WHERE tenant_id = ? AND kb_id = ? AND entity_id IN (${m})`;
  for (const row of await rowsWhereIn(tx, sql, key, ids)) held.get(String(row.entity_id))?.add(String(row.term));
  const stale = ids.filter((id) => {
    const terms = wanted.get(id)!;
    const have = held.get(id)!;
    return terms.length !== have.size || terms.some((t) => !have.has(t));
  });
  await execWhereIn(tx, (m) => `DELETE FROM entity_name_terms WHERE tenant_id = ? AND kb_id = ? AND entity_id IN (${m})`, key, stale);
  await insertNameTerms(tx, scope, stale.flatMap((id) => wanted.get(id)!.map((term) => ({ id, term }))));
}

/** `onConflict` is appended to each INSERT: the backfill, which may run again after an interruption, keeps the terms already there. */
async function insertNameTerms(tx: SqlSession, scope: KbScope, terms: ReadonlyArray<{ id: string; term: string }>, onConflict = ''): Promise<void> {
  for (const batch of batches(terms, 200)) {
    await tx.exec(
      `INSERT INTO entity_name_terms (tenant_id, kb_id, term, entity_id) VALUES ${batch.map(() => '(?, ?, ?, ?)').join(', ')} ${onConflict}`.trimEnd(),
      batch.flatMap((t) => [scope.tenantId, scope.kbId, t.term, t.id]),
    );
  }
}

/**
 * Ids of the entities whose names share words with `words` (fullTextTerms of a query), at most
 * `cap`: names holding the words themselves first, most words first. Only when those are fewer
 * than `wanted` do names with a word that starts with the query's last word follow (one of
 * MIN_PREFIX_LENGTH letters or more), most mentioned first: "marie cur" finds "curie", as a
 * search box's last word is the one still being typed (the SearchEntities RPC), and
 * rankEntitiesByName ranks every whole-word hit above them anyway. A query word inside a
 * name's word ("uri" in "curie"), or the start of a word before the last, is not found: the
 * LIKE '%uri%' scan of every name this replaces found both.
 *
 * Each read is one index range per word on (tenant_id, kb_id, term), the word start's reading
 * at most PREFIX_ROWS rows. The engine counts each entity's words and returns only the first
 * `cap`: common words ("mon", "file") match hundreds of names each, and making a row of every
 * match cost a question up to 5 ms at 100k chunks (three times the grouped read). The grouping
 * is over a subquery with a LIMIT (WORD_MATCH_ROWS, above any real count), which SQLite does not
 * merge into it: a GROUP BY on the table itself, or ranges ORed together, make SQLite (without
 * statistics) walk the index by entity instead, which is every name of the knowledge base.
 */
export async function entityIdsByNameWords(session: SqlSession, scope: KbScope, words: readonly string[], wanted: number, cap: number): Promise<string[]> {
  const terms = [...new Set(words.map(cutTerm))];
  if (terms.length === 0) return [];
  const key = [scope.tenantId, scope.kbId];
  const matches = `SELECT entity_id FROM entity_name_terms WHERE tenant_id = ? AND kb_id = ? AND term IN (${marks(terms)}) LIMIT ${WORD_MATCH_ROWS}`;
  const grouped = await session.rows(`SELECT entity_id, COUNT(*) AS shared_words FROM (${matches}) word_hits GROUP BY entity_id ORDER BY shared_words DESC, entity_id LIMIT ${Math.max(1, Math.floor(cap))}`, [...key, ...terms]);
  const ids = grouped.map((row) => String(row.entity_id));
  const last = terms.at(-1)!;
  if (ids.length >= wanted || Array.from(last).length < MIN_PREFIX_LENGTH) return ids;
  // Fewer than `wanted`, and so fewer than `cap`: these are all the names holding a whole word.
  const hits = new Set(ids);
  const rows = await session.rows(
    `SELECT t.entity_id, e.mention_count FROM entity_name_terms t JOIN entities e ON e.tenant_id = t.tenant_id AND e.kb_id = t.kb_id AND e.id = t.entity_id
     WHERE t.tenant_id = ? AND t.kb_id = ? AND t.term >= ? AND t.term < ? LIMIT ${PREFIX_ROWS}`,
    [...key, last, afterPrefix(last)],
  );
  const mentions = new Map<string, number>();
  for (const r of rows) if (!hits.has(String(r.entity_id))) mentions.set(String(r.entity_id), Number(r.mention_count));
  const partial = [...mentions].sort((a, b) => b[1] - a[1] || compareIds(a[0], b[0])).map(([id]) => id);
  return [...ids, ...partial].slice(0, cap);
}

/** Rows a word start reads at most: a short, common one ("str") stays a bounded read. */
const PREFIX_ROWS = 10_000;
/** Word matches grouped at most: far above any real count (the most common name word at 100k chunks matches 837 names). */
const WORD_MATCH_ROWS = 1_000_000;

/**
 * The least string above every string that starts with `prefix` in code point order, which is
 * the order of both engines' binary collations: `term >= prefix AND term < afterPrefix(prefix)`
 * is exactly "starts with", and an index range on every engine (LIKE 'p%' is not on SQLite's
 * case-sensitive columns). A query word's last code point is a letter or digit, below U+10FFFF.
 */
export function afterPrefix(prefix: string): string {
  const points = Array.from(prefix);
  const last = points.pop()!.codePointAt(0)!;
  // U+D800-DFFF are surrogates, not characters: the next character after U+D7FF is U+E000.
  return points.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
}

/**
 * Fills the terms of entities written before the table existed (migration 21 on the MySQL
 * family; SQLite fills them in SQL, see migrateSqlite), one knowledge base at a time in pages of
 * entities by id. Safe to run again: terms already there are kept.
 */
export async function backfillEntityNameTerms(session: SqlSession, dialect: SqlDialect, pageSize = 1000): Promise<void> {
  for (const kb of await session.rows('SELECT tenant_id, id FROM knowledge_bases ORDER BY tenant_id, id')) {
    const scope = { tenantId: String(kb.tenant_id), kbId: String(kb.id) };
    for (let after = ''; ; ) {
      const page = await session.rows(
        `SELECT id, normalized_name FROM entities WHERE ${dialect.byIdScope()} AND id > ? ORDER BY id LIMIT ${pageSize}`,
        [scope.tenantId, scope.kbId, after],
      );
      const terms = page.flatMap((r) => entityNameTerms(String(r.normalized_name)).map((term) => ({ id: String(r.id), term })));
      await insertNameTerms(session, scope, terms, dialect.onConflictKeep('entity_id'));
      if (page.length < pageSize) break;
      after = String(page.at(-1)!.id);
    }
  }
}
