import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MAX_TERM_LENGTH } from '@trellis/text-search';
import { SqliteDatabase } from '../sqlite/sqlite-database';
import { sqliteDialect } from '../sqlite/sqlite-dialect';
import { migrateSqlite } from '../sqlite/sqlite-schema';
import { afterPrefix, backfillEntityNameTerms, entityIdsByNameWords, entityNameTerms } from './entity-name-terms-sql';

describe('entityNameTerms', () => {
  it('splits a normalised name as queries are split: words, no stopwords or single letters, once each, cut to the column', () => {
    expect(entityNameTerms('the house of curie')).toEqual(['house', 'curie']);
    expect(entityNameTerms('m. curie-curie 2')).toEqual(['curie', '2']);
    expect(entityNameTerms('x'.repeat(MAX_TERM_LENGTH + 3))).toEqual(['x'.repeat(MAX_TERM_LENGTH)]);
  });
});

describe('afterPrefix', () => {
  it('is the least string above every string starting with the prefix, in code point order', () => {
    expect(afterPrefix('cur')).toBe('cus');
    expect(afterPrefix('a9')).toBe('a:');
    // Past U+D7FF come U+E000 and the letters outside the BMP (two UTF-16 units each).
    expect(afterPrefix('a\ud7ff')).toBe('a\ue000');
    expect(afterPrefix('𝒶')).toBe('𝒷');
    const sorted = (xs: string[]) => [...xs].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const inside = ['cur', 'curie', 'cur\u{1d4b6}', 'cur\uffff'];
    for (const word of inside) expect(sorted([word, afterPrefix('cur')])[0]).toBe(word);
    expect(sorted(['cus', afterPrefix('cur')])[0]).toBe('cus');
  });
});

describe('backfillEntityNameTerms', () => {
  it('fills the words of every entity of every knowledge base, page by page, and again changes nothing', async () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    const kb = db.prepare("INSERT INTO knowledge_bases (tenant_id, id, name, settings, created_at) VALUES (?, ?, ?, '{}', '2026-01-01')");
    const entity = db.prepare("INSERT INTO entities (tenant_id, kb_id, id, name, normalized_name, type) VALUES (?, ?, ?, ?, ?, 'x')");
    kb.run('t1', 'k1', 'a');
    kb.run('t2', 'k2', 'a');
    for (const [i, name] of ['marie curie', 'polonium', 'radium institute', 'of the'].entries()) entity.run('t1', 'k1', `e${i}`, name, name);
    entity.run('t2', 'k2', 'e9', 'curie', 'curie');
    const terms = () => db.prepare('SELECT tenant_id, kb_id, entity_id, term FROM entity_name_terms ORDER BY tenant_id, entity_id, term').all();
    expect(terms()).toEqual([]);

    const session = new SqliteDatabase(db);
    await backfillEntityNameTerms(session, sqliteDialect, 2);
    const filled = terms();
    expect(filled).toEqual([
      { tenant_id: 't1', kb_id: 'k1', entity_id: 'e0', term: 'curie' },
      { tenant_id: 't1', kb_id: 'k1', entity_id: 'e0', term: 'marie' },
      { tenant_id: 't1', kb_id: 'k1', entity_id: 'e1', term: 'polonium' },
      { tenant_id: 't1', kb_id: 'k1', entity_id: 'e2', term: 'institute' },
      { tenant_id: 't1', kb_id: 'k1', entity_id: 'e2', term: 'radium' },
      { tenant_id: 't2', kb_id: 'k2', entity_id: 'e9', term: 'curie' },
    ]);
    await backfillEntityNameTerms(session, sqliteDialect, 2);
    expect(terms()).toEqual(filled);
    db.close();
  });
});

describe('entityIdsByNameWords', () => {
  it('gives the first `cap` names by words shared, then id, counted by the engine over one index range per word', async () => {
    const db = new Database(':memory:');
    migrateSqlite(db);
    db.prepare("INSERT INTO knowledge_bases (tenant_id, id, name, settings, created_at) VALUES ('t', 'k', 'a', '{}', '2026-01-01')").run();
    const term = db.prepare("INSERT INTO entity_name_terms (tenant_id, kb_id, term, entity_id) VALUES ('t', 'k', ?, ?)");
    // 60 names with "station", every third with "north" too, every fifth with "old" too; ids not in word order.
    for (let i = 0; i < 60; i++) {
      const id = `e${String((i * 37) % 60).padStart(2, '0')}`;
      term.run('station', id);
      if (i % 3 === 0) term.run('north', id);
      if (i % 5 === 0) term.run('old', id);
    }
    term.run('station', 'other-kb-is-not-here');
    db.prepare("UPDATE entity_name_terms SET kb_id = 'elsewhere' WHERE entity_id = 'other-kb-is-not-here'").run();
    const words = new Map<string, number>();
    for (const row of db.prepare("SELECT entity_id, count(*) AS n FROM entity_name_terms WHERE kb_id = 'k' AND term IN ('station', 'north', 'old') GROUP BY entity_id").all() as Array<{ entity_id: string; n: number }>) words.set(row.entity_id, row.n);
    const expected = [...words].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);

    const statements: string[] = [];
    const session = new SqliteDatabase(db);
    const rows = session.rows.bind(session);
    session.rows = (sql, params) => (statements.push(sql), rows(sql, params));
    const found = await entityIdsByNameWords(session, { tenantId: 't', kbId: 'k' }, ['old', 'north', 'station'], 10, 25);
    expect(found).toEqual(expected.slice(0, 25));
    expect(found.slice(0, 4).every((id) => words.get(id) === 3)).toBe(true);
    // One statement, whose plan searches the words' index (not a walk of every name by entity).
    expect(statements).toHaveLength(1);
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${statements[0]}`).all('t', 'k', 'old', 'north', 'station').map((step) => (step as { detail: string }).detail);
    expect(plan.some((step) => /SEARCH entity_name_terms USING COVERING INDEX sqlite_autoindex_entity_name_terms_1 \(tenant_id=\? AND kb_id=\? AND term=\?\)/.test(step))).toBe(true);
    db.close();
  });
});
