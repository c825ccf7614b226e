import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { SqliteDatabase } from './sqlite-database';
import { SqliteStore } from './sqlite-store';
import { CHUNK_FTS_DDL, fts5Index } from './fts5-index';
import { Fts5CommonTerms } from './fts5-common-terms';

const SETTINGS = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

interface Statement {
  sql: string;
  rows: number;
  params: readonly SqlValue[];
}

/** Every statement a session ran, with the rows it returned. */
function recording(session: SqlSession): { session: SqlSession; statements: Statement[] } {
  const statements: Statement[] = [];
  return {
    statements,
    session: {
      async rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
        const rows = await session.rows(sql, params);
        statements.push({ sql, rows: rows.length, params: params ?? [] });
        return rows;
      },
      async exec(sql: string, params?: readonly SqlValue[]): Promise<number> {
        statements.push({ sql, rows: 0, params: params ?? [] });
        return session.exec(sql, params);
      },
      each: (sql, params, onRow) => session.each(sql, params, onRow),
    },
  };
}

/** The statements that ranked (bm25), not those that counted terms. */
const rankings = (statements: readonly Statement[]) => statements.filter((s) => s.sql.includes('bm25('));

async function fill(store: SqliteStore, scope: KbScope, documentId: string, lines: readonly string[]): Promise<void> {
  await store.repositories.documents.saveDocumentVersion(scope, { id: documentId, sourceUri: documentId, filename: `${documentId}.txt`, mimeType: 'text/plain', contentHash: documentId, version: 1, sizeBytes: 1, metadata: {}, text: '' });
  await store.repositories.chunks.upsertChunks(
    scope,
    lines.map((text, i) => ({ id: `${documentId}-${i}`, documentId, version: 1, ordinal: i, text, heading: '', tokenCount: 1, contentHash: `${documentId}-${i}`, embedding: new Float32Array([1, 0]) })),
  );
}

describe('fts5Index: a search stays bounded as the index grows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-fts5-'));
  const path = join(dir, 'trellis.db');
  let db: Database.Database;
  let small: KbScope;
  let big: KbScope;

  beforeAll(async () => {
    const store = new SqliteStore(path);
    small = { tenantId: 't1', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'small', description: '', settings: SETTINGS })).id };
    big = { tenantId: 't1', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'big', description: '', settings: SETTINGS })).id };
    // 600 chunks of the common word in another knowledge base, each a better match than the small one's.
    await fill(store, big, 'b', Array.from({ length: 600 }, (_, i) => `kettle kettle kettle steam ${i}`));
    await fill(store, small, 's', ['one kettle on the stove', ...Array.from({ length: 200 }, (_, i) => `kettle number ${i} and a long line of other words`), 'a rare teapot']);
    await store.close();
    db = new Database(path, { readonly: true });
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads k rows for a term in every chunk: FTS5 ranks, the join sees only what it keeps', async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    const hits = await fts5Index.search(session, small, 'kettle stove', 5);
    expect(hits).toHaveLength(5);
    expect(hits[0]!.item).toBe('s-0');
    // Five rows at most per ranking: the 201 matches of the knowledge base (and the other's 600)
    // were ranked inside FTS5. "kettle" is in nearly every row, so "stove" is ranked alone
    // first; it finds one chunk, fewer than asked for, so both are ranked again.
    expect(rankings(statements).map((s) => s.rows)).toEqual([1, 5]);
  });

  it("ranks inside the searched knowledge base: another's better matches never fill the ranking", async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    expect((await fts5Index.search(session, small, 'kettle', 1)).map((h) => h.item)).toHaveLength(1);
    expect(rankings(statements).map((s) => s.rows)).toEqual([1]);
    expect((await fts5Index.search(session, big, 'kettle', 3)).every((h) => h.item.startsWith('b-'))).toBe(true);
  });

  it('still finds the one chunk of a rare term, and nothing for a term no chunk has', async () => {
    const session = new SqliteDatabase(db);
    expect((await fts5Index.search(session, small, 'teapot kettle', 1)).map((h) => h.item)).toEqual(['s-201']);
    expect(await fts5Index.search(session, small, 'samovar', 5)).toEqual([]);
    expect(await fts5Index.search(session, big, 'teapot', 5)).toEqual([]);
  });

  it('joins chunks and documents outside the ranking: the plan ranks chunk_fts alone', async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    await fts5Index.search(session, small, 'kettle', 5);
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${rankings(statements)[0]!.sql}`).all(small.tenantId, small.kbId, '"kettle"', small.tenantId, small.kbId) as Array<{ id: number; parent: number; detail: string }>;
    const ranking = plan.find((step) => /^(CO-ROUTINE|MATERIALIZE) r$/.test(step.detail));
    expect(ranking, plan.map((s) => s.detail).join(' | ')).toBeDefined();
    const inside = plan.filter((step) => step.parent === ranking!.id).map((s) => s.detail);
    expect(inside.some((d) => /VIRTUAL TABLE/.test(d))).toBe(true);
    expect(inside.filter((d) => /\b(chunks|documents|c|d)\b/.test(d.replace(/VIRTUAL TABLE INDEX.*/, '')))).toEqual([]);
  });
});

describe('fts5Index: writing chunks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-fts5-write-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('deletes the entries of chunks indexed before, and only theirs: a delete by chunk_id reads the whole FTS table', async () => {
    const path = join(dir, 'trellis.db');
    const store = new SqliteStore(path);
    const scope = { tenantId: 't1', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: SETTINGS })).id };
    await fill(store, scope, 'd', ['the first text']);
    await store.close();
    const db = new Database(path);
    const { session, statements } = recording(new SqliteDatabase(db));
    const text = (t: string) => ({ text: t, length: 0, frequencies: new Map<string, number>() });
    const deletes = () => statements.filter((s) => s.sql.startsWith('DELETE')).length;

    await fts5Index.replace(session, scope, new Map([['d-new', text('a new chunk')]]), new Map());
    expect(deletes()).toBe(0);
    await fts5Index.replace(session, scope, new Map([['d-0', text('the second text')]]), new Map([['d-0', 0]]));
    expect(deletes()).toBe(1);
    // The chunk indexed before has one entry, its new text; the new chunk has its own.
    expect(db.prepare('SELECT chunk_id, text FROM chunk_fts ORDER BY chunk_id').all()).toEqual([
      { chunk_id: 'd-0', text: 'the second text' },
      { chunk_id: 'd-new', text: 'a new chunk' },
    ]);
    db.close();
  });
});

describe('fts5Index: terms in half of the rows or more are not matched', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-fts5-common-'));
  const path = join(dir, 'trellis.db');
  let db: Database.Database;
  let scope: KbScope;

  beforeAll(async () => {
    const store = new SqliteStore(path);
    scope = { tenantId: 't1', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: SETTINGS })).id };
    // "common" in all 40 rows; "rare" in 8 of them, some twice, in rows of different lengths; "unique" in one.
    const lines = Array.from({ length: 40 }, (_, i) => {
      const rare = i % 5 === 0 ? (i % 10 === 0 ? ' rare rare' : ' rare') : '';
      return `common words ${'filler '.repeat(i % 7)}${rare}${i === 13 ? ' unique' : ''} line${i}`;
    });
    await fill(store, scope, 'c', lines);
    await store.close();
    db = new Database(path, { readonly: true });
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The ranking with every term matched, straight from SQLite. */
  const rankedWithAll = (terms: string, k: number) =>
    (db.prepare(`SELECT chunk_id FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY bm25(chunk_fts, 0, 1, 0) LIMIT ${k}`).all(`text : (${terms})`) as Array<{ chunk_id: string }>).map((r) => r.chunk_id);

  it('matches only the rarer terms and ranks as bm25 does with all of them', async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    const hits = await fts5Index.search(session, scope, 'common rare', 6);
    expect(hits.map((h) => h.item)).toEqual(rankedWithAll('"common" OR "rare"', 6));
    const [ranking, ...again] = rankings(statements);
    expect(again).toEqual([]);
    expect(ranking!.params).toContain('"rare"');
    expect(ranking!.params.join(' ')).not.toContain('common');
  });

  it('ranks again with every term when the rarer ones match fewer chunks than asked for', async () => {
    const hits = await fts5Index.search(new SqliteDatabase(db), scope, 'unique common', 3);
    expect(hits.map((h) => h.item)).toEqual(rankedWithAll('"unique" OR "common"', 3));
    expect(hits[0]!.item).toBe('c-13');
  });

  it('matches every term when all of them are common, and counts a term once', async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    expect((await fts5Index.search(session, scope, 'common words', 2)).map((h) => h.item)).toEqual(rankedWithAll('"common" OR "words"', 2));
    const counts = statements.length - rankings(statements).length;
    await fts5Index.search(session, scope, 'words common', 2);
    expect(statements.length - rankings(statements).length).toBe(counts);
  });
});

describe('Fts5CommonTerms', () => {
  it('counts the terms again once the table has changed by more than 5 % and the row count is read again', async () => {
    const raw = new Database(':memory:');
    raw.exec(CHUNK_FTS_DDL);
    raw.exec('CREATE TABLE chunks (id TEXT PRIMARY KEY)');
    const entry = raw.prepare("INSERT INTO chunk_fts (chunk_id, text, kb) VALUES (?, ?, 'k')");
    const chunk = raw.prepare('INSERT INTO chunks (id) VALUES (?)');
    const insert = { run: (id: string, text: string) => (entry.run(id, text), chunk.run(id)) };
    for (let i = 0; i < 10; i++) insert.run(`a${i}`, i < 4 ? 'apple pear' : 'pear');
    let now = 0;
    const terms = new Fts5CommonTerms(() => now);
    const session = new SqliteDatabase(raw);
    expect(await terms.informative(session, ['apple', 'pear'])).toEqual(['apple']);
    for (let i = 0; i < 10; i++) insert.run(`b${i}`, 'apple');
    // Within the row count's lifetime nothing is counted again.
    expect(await terms.informative(session, ['apple', 'pear'])).toEqual(['apple']);
    now += 60_000;
    // 14 of 20 rows hold "apple" now, 10 "pear".
    expect(await terms.informative(session, ['apple', 'pear'])).toEqual(['apple', 'pear']);
    raw.close();
  });
});
