import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { Row, SqlSession, SqlValue } from '../sql/sql-session';
import { SqliteDatabase } from './sqlite-database';
import { SqliteStore } from './sqlite-store';
import { fts5Index } from './fts5-index';

const SETTINGS = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

/** Every statement a session ran, with the rows it returned. */
function recording(session: SqlSession): { session: SqlSession; statements: Array<{ sql: string; rows: number }> } {
  const statements: Array<{ sql: string; rows: number }> = [];
  return {
    statements,
    session: {
      async rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
        const rows = await session.rows(sql, params);
        statements.push({ sql, rows: rows.length });
        return rows;
      },
      async exec(sql: string, params?: readonly SqlValue[]): Promise<number> {
        statements.push({ sql, rows: 0 });
        return session.exec(sql, params);
      },
      each: (sql, params, onRow) => session.each(sql, params, onRow),
    },
  };
}

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
    // One statement, five rows: the 201 matches of the knowledge base (and the other's 600) were ranked inside FTS5.
    expect(statements).toEqual([{ sql: expect.stringContaining('MATCH'), rows: 5 }]);
  });

  it("ranks inside the searched knowledge base: another's better matches never fill the ranking", async () => {
    const { session, statements } = recording(new SqliteDatabase(db));
    expect((await fts5Index.search(session, small, 'kettle', 1)).map((h) => h.item)).toHaveLength(1);
    expect(statements.map((s) => s.rows)).toEqual([1]);
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
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${statements[0]!.sql}`).all(small.tenantId, small.kbId, '"kettle"', small.tenantId, small.kbId) as Array<{ id: number; parent: number; detail: string }>;
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
