import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { EDGE_SELECT } from '../src/row-mappers';
import { migrateSqlite } from '../src/sqlite/sqlite-schema';
import { ENTITY_NODES_INDEX } from '../src/sql/schema/graph-tables';

/** A lookup by id: `id = ?` or `id IN (...)`, with or without a table alias (not `document_id`). */
const BY_ID = /(^|[\s(.])id (= \?|IN \()/;
/** An IN list of ids or keys: `id IN (?`, `entity_id IN (?`, `title_key IN (?`. */
const IN_IDS = /(\bid|_id|_key) IN \(\?/;
/** A plan step that searches an index on the knowledge base's scope and nothing more. */
const SCOPE_ONLY = /USING (COVERING )?INDEX \S+ \(tenant_id=\? AND kb_id=\?\)$/;

/**
 * Plans every statement SQLite prepares in the calling test file, and fails on a lookup by id
 * that searches a (tenant_id, kb_id, ...) index on its scope alone. Without statistics SQLite
 * prefers such an index over the primary key, and the lookup then scans the whole knowledge
 * base: once per chunk written, that made indexing quadratic (hotpotqa-100 fell to 3.4
 * chunks/s). Statements write the scope with dialect.byIdScope(), which keeps SQLite on the
 * primary key.
 *
 * Call it once, at the end of the file that runs the SQLite store's contract suites: the
 * recording starts when the file is collected, so it sees every test of the file, and the
 * plans are checked after them. The statements come from the store's real contract run, not
 * from a second run of it.
 */
export function describeSqliteQueryPlans(): void {
  const originalPrepare = Database.prototype.prepare;
  const prepared = new Set<string>();
  Database.prototype.prepare = function (this: Database.Database, sql: string) {
    prepared.add(sql);
    return originalPrepare.call(this, sql);
  } as typeof originalPrepare;
  afterAll(() => {
    Database.prototype.prepare = originalPrepare;
  });

  describe('SQLite query plans', () => {
    it("recorded the statements of the file's suites", () => {
      expect(prepared.size).toBeGreaterThan(100);
    });

    /** The statements `selects` picks that search an index on their scope alone, with those steps of their plans. */
    const scopeOnlySearches = (selects: RegExp): string[] => {
      const db = new Database(':memory:');
      try {
        migrateSqlite(db);
        const scans: string[] = [];
        for (const sql of prepared) {
          if (!selects.test(sql) || !/kb_id/.test(sql) || !/^\s*(SELECT|UPDATE|DELETE)/i.test(sql)) continue;
          const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
          const plan = originalPrepare.call(db, `EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>;
          const bad = plan.filter((step) => SCOPE_ONLY.test(step.detail));
          if (bad.length > 0) scans.push(`${sql.replace(/\s+/g, ' ').slice(0, 300)}\n    ${bad.map((s) => s.detail).join('; ')}`);
        }
        return scans;
      } finally {
        db.close();
      }
    };

    it('never looks rows up by id through an index on the knowledge base alone', () => {
      const scans = scopeOnlySearches(BY_ID);
      expect(scans, `statements that scan a knowledge base to find rows by id:\n${scans.join('\n')}`).toEqual([]);
    });

    // An IN list of ids or keys names a few rows; the scope's range of an index is all of them
    // (0.9 s at 100k chunks for the pages titled by a question's names, before it read by index).
    it('never scans a knowledge base through its scope alone to find the rows an IN list of ids or keys names', () => {
      const scans = scopeOnlySearches(IN_IDS);
      expect(scans, `statements that scan a knowledge base for the rows an IN list names:\n${scans.join('\n')}`).toEqual([]);
    });

    it("reads relationships' edges from the endpoint indexes alone, never from their rows, and a hub's heaviest without sorting its edges", () => {
      const db = new Database(':memory:');
      try {
        migrateSqlite(db);
        const planOf = (sql: string) => {
          const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
          return (originalPrepare.call(db, `EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((step) => step.detail);
        };
        const edgeReads = [...prepared].filter((sql) => sql.startsWith(EDGE_SELECT));
        expect(edgeReads.length).toBeGreaterThanOrEqual(2);
        for (const sql of edgeReads) expect(planOf(sql)).toEqual([expect.stringMatching(/^SEARCH r USING COVERING INDEX relationship_heaviest_by_(source|target) /)]);
        const heaviestReads = [...prepared].filter((sql) => sql.startsWith(`SELECT * FROM (${EDGE_SELECT}`));
        expect(heaviestReads.length).toBeGreaterThanOrEqual(2);
        for (const sql of heaviestReads) {
          const plan = planOf(sql);
          const searches = plan.filter((step) => /\br\b/.test(step));
          expect(searches.length).toBe(sql.split(' UNION ALL ').length);
          for (const step of searches) expect(step).toMatch(/^SEARCH r USING COVERING INDEX relationship_heaviest_by_(source|target) \(tenant_id=\? AND kb_id=\? AND (source|target)_id=\?\)$/);
          expect(plan.filter((step) => /TEMP B-TREE/.test(step))).toEqual([]);
        }
      } finally {
        db.close();
      }
    });

    it("reads entities' names and mention counts by id from their index alone, never from rows that carry embeddings", () => {
      const db = new Database(':memory:');
      try {
        migrateSqlite(db);
        const nodeReads = [...prepared].filter((sql) => sql.includes(`FROM entities INDEXED BY ${ENTITY_NODES_INDEX} `));
        // getEntityNodes (which the name searches' candidates go through too), for lists of ids of more than one length.
        expect(nodeReads.length).toBeGreaterThanOrEqual(2);
        for (const sql of nodeReads) {
          const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
          const plan = (originalPrepare.call(db, `EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((step) => step.detail);
          expect(plan).toEqual([`SEARCH entities USING COVERING INDEX ${ENTITY_NODES_INDEX} (id=?)`]);
        }
      } finally {
        db.close();
      }
    });
  });
}
