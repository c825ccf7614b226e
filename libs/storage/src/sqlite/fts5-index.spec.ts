import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { SqliteDatabase } from './sqlite-database';
import { SqliteStore } from './sqlite-store';
import { sqliteVarint } from './fts5-common-terms';
import { fts5Index as createFts5Index } from './fts5-index';

const SETTINGS = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

interface Ran {
  sql: string;
  params?: readonly SqlValue[];
  rows: number;
}

/** Every statement a session ran, with its parameters and the rows it returned. */
function recording(session: SqlSession): { session: SqlSession; statements: Ran[] } {
  const statements: Ran[] = [];
  return {
    statements,
    session: {
      async rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
        const rows = await session.rows(sql, params);
        statements.push({ sql, params, rows: rows.length });
        return rows;
      },
      async exec(sql: string, params?: readonly SqlValue[]): Promise<number> {
        statements.push({ sql, params, rows: 0 });
        return session.exec(sql, params);
      },
      each: (sql, params, onRow) => session.each(sql, params, onRow),
    },
  };
}

/** The ranking statements among those recorded (not the document-frequency counts). */
const rankings = (statements: readonly Ran[]) => statements.filter((s) => s.sql.includes('ORDER BY score'));

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
  const fts5Index = createFts5Index();

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
    // "kettle" is in nearly every row, so the rarer "stove" is searched alone first; it finds one
    // chunk of five, and the search with both ranks the 201 matches of the knowledge base (and the
    // other's 600) inside FTS5: five rows come out.
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

describe('fts5Index: terms in more than half of the rows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-fts5-common-'));
  const path = join(dir, 'trellis.db');
  let db: Database.Database;
  let scope: KbScope;
  // 100 chunks: "alpha" in 80 of them (common), "beta" in 30, "gamma" in 10, "zeta" in 2; each
  // chunk of its own length, so no two score alike (a tie may fall either way once alpha is out).
  const lines = Array.from({ length: 100 }, (_, i) =>
    [i < 80 ? 'alpha' : 'omega', i % 10 < 3 ? 'beta' : '', i % 10 === 0 ? 'gamma' : '', i === 95 || i === 97 ? 'zeta' : '', i % 7 === 0 ? 'alpha alpha' : '', ...Array.from({ length: i }, () => 'filler')].join(' '),
  );

  beforeAll(async () => {
    const store = new SqliteStore(path);
    scope = { tenantId: 't1', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: SETTINGS })).id };
    await fill(store, scope, 'c', lines);
    await store.close();
    db = new Database(path);
  });
  afterAll(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The ranking with every term in the match, as FTS5 scores it: what leaving terms out must keep. */
  const withAllTerms = (terms: readonly string[], k: number) =>
    (db.prepare(`SELECT chunk_id AS id, -bm25(chunk_fts, 0, 1, 0) AS score FROM chunk_fts WHERE chunk_fts MATCH ? ORDER BY bm25(chunk_fts, 0, 1, 0) LIMIT ${k}`).all(`text : (${terms.map((t) => `"${t}"`).join(' OR ')})`) as Array<{ id: string; score: number }>);

  it('leaves the common term out of the match and ranks as the full match does', async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    const hits = await createFts5Index().search(session, scope, 'alpha beta gamma', 8);
    const expected = withAllTerms(['alpha', 'beta', 'gamma'], 8);
    expect(hits.map((h) => h.item)).toEqual(expected.map((e) => e.id));
    hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 4));
    // One ranking, of the rarer terms alone: their 30 matches, not alpha's 80.
    expect(rankings(statements).map((s) => s.params?.[2])).toEqual(['"beta" OR "gamma"']);
  });

  it('ranks the chunks of common terms only after those of the rarer terms, when those run out', async () => {
    const hits = await createFts5Index().search(new SqliteDatabase(db), scope, 'alpha zeta', 6);
    expect(hits.slice(0, 2).map((h) => h.item).sort()).toEqual(['c-95', 'c-97']);
    expect(hits.map((h) => h.item)).toEqual(withAllTerms(['alpha', 'zeta'], 6).map((e) => e.id));
  });

  it('counts a term once, and again when writes move the table by more than a hundredth', async () => {
    const index = createFts5Index();
    const { session, statements } = recording(new SqliteDatabase(db));
    const counts = () => statements.filter((s) => s.sql.includes('count(*)')).length;
    await index.search(session, scope, 'alpha beta', 5);
    expect(counts()).toBe(2);
    await index.search(session, scope, 'beta alpha gamma', 5);
    expect(counts()).toBe(3);
    // Another writer (a second store on the file) adds two rows: N moved by 2 %, so the counts are taken again.
    const other = new SqliteStore(path);
    await fill(other, scope, 'n', ['alpha new', 'alpha newer']);
    await other.close();
    await index.search(session, scope, 'alpha beta', 5);
    expect(counts()).toBe(5);
    // This process's own writes of as many rows, N unchanged (a replacement), expire them too.
    await index.replace(session, scope, new Map(['n-0', 'n-1'].map((id) => [id, { text: 'omega again', length: 0, frequencies: new Map<string, number>() }])), new Map([['n-0', 0], ['n-1', 0]]));
    await index.search(session, scope, 'alpha beta', 5);
    expect(counts()).toBe(7);
  });

  it('reads SQLite varints as FTS5 writes them', () => {
    expect(sqliteVarint(Uint8Array.of(0x00))).toBe(0);
    expect(sqliteVarint(Uint8Array.of(0x7f))).toBe(127);
    expect(sqliteVarint(Uint8Array.of(0x81, 0x00))).toBe(128);
    expect(sqliteVarint(Uint8Array.of(0x86, 0xa0, 0x2b, 0x01))).toBe(102_443);
    expect(sqliteVarint(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))).toBe(2 ** 64 - 1);
  });
});

describe('fts5Index: writing chunks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-fts5-write-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('deletes the entries of chunks indexed before, and only theirs: a delete by chunk_id reads the whole FTS table', async () => {
    const fts5Index = createFts5Index();
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
