import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { migrateSqlite } from '../src/sqlite/sqlite-schema';
import { describeStoreContract } from './store-contract';
import { describeGraphEditContract } from './graph-edits-contract';
import { describeCommunityContract } from './community-contract';
import { describeCommunityChangeContract } from './community-change-contract';
import { describeStuckWorkContract } from './stuck-work-contract';
import { describeOutboxContract } from './outbox-contract';
import { describeChatContract } from './chat-contract';

/**
 * Every statement the SQLite store prepares while the contract suites run is recorded, and each
 * that looks rows up by id is planned: none may search a (tenant_id, kb_id, ...) index on its
 * scope alone. Without statistics SQLite prefers such an index over the primary key, and the
 * lookup then scans the whole knowledge base: once per chunk written, that made indexing
 * quadratic (hotpotqa-100 fell to 3.4 chunks/s). Statements write the scope with
 * dialect.byIdScope(), which keeps SQLite on the primary key.
 */
const originalPrepare = Database.prototype.prepare;
const prepared = new Set<string>();
Database.prototype.prepare = function (this: Database.Database, sql: string) {
  prepared.add(sql);
  return originalPrepare.call(this, sql);
} as typeof originalPrepare;
afterAll(() => {
  Database.prototype.prepare = originalPrepare;
});

const store = async () => new SqliteStore(':memory:');
describeStoreContract('SqliteStore (plans recorded)', store);
describeGraphEditContract('SqliteStore (plans recorded)', store);
describeCommunityContract('SqliteStore (plans recorded)', store);
describeCommunityChangeContract('SqliteStore (plans recorded)', store);
describeStuckWorkContract('SqliteStore (plans recorded)', store);
describeOutboxContract('SqliteStore (plans recorded)', store);
describeChatContract('SqliteStore (plans recorded)', store);

/** A lookup by id: `id = ?` or `id IN (...)`, with or without a table alias (not `document_id`). */
const BY_ID = /(^|[\s(.])id (= \?|IN \()/;
/** A plan step that searches an index on the knowledge base's scope and nothing more. */
const SCOPE_ONLY = /USING (COVERING )?INDEX \S+ \(tenant_id=\? AND kb_id=\?\)$/;

describe('SQLite query plans', () => {
  it('recorded the statements of the suites above', () => {
    expect(prepared.size).toBeGreaterThan(100);
  });

  it('never looks rows up by id through an index on the knowledge base alone', () => {
    const db = new Database(':memory:');
    try {
      migrateSqlite(db);
      const scans: string[] = [];
      for (const sql of prepared) {
        if (!BY_ID.test(sql) || !/kb_id/.test(sql) || !/^\s*(SELECT|UPDATE|DELETE)/i.test(sql)) continue;
        const params = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null);
        const plan = originalPrepare.call(db, `EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>;
        const bad = plan.filter((step) => SCOPE_ONLY.test(step.detail));
        if (bad.length > 0) scans.push(`${sql.replace(/\s+/g, ' ').slice(0, 200)}\n    ${bad.map((s) => s.detail).join('; ')}`);
      }
      expect(scans, `statements that scan a knowledge base to find rows by id:\n${scans.join('\n')}`).toEqual([]);
    } finally {
      db.close();
    }
  });
});
