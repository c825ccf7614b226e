import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { fullTextTerms } from '@trellis/text-search';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, chunk, eachStoreWithKnowledgeBase, saveTestDocument } from './store-contract';

const DATASET = join(__dirname, '../../../datasets/nestjs-docs');
const records = (file: string) => readFileSync(join(DATASET, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
/** The NestJS docs pages (in the repository, with their licence), one chunk each. */
const PAGES = records('corpus.jsonl').map((p) => `${p.title}\n${p.text}`);
/** Their questions, and the same with a dozen names of a page added, as hybrid's second hop adds them. */
const QUERIES = records('questions.jsonl').flatMap((q, i) => [q.question!, `${q.question} ${PAGES[i]!.match(/\b[A-Z][a-z]+[A-Z]\w*/g)?.slice(0, 12).join(' ') ?? ''}`]);

interface Hit {
  text: string;
  score: number;
}

/**
 * The top k of SQLite's FTS5 (porter unicode61, bm25()) over `texts`: how the standalone store
 * ranked until its full text moved in memory, and what every retrieval quality figure was
 * measured with.
 */
function fts5Top(texts: readonly string[], queries: readonly string[], k: number): Hit[][] {
  const db = new Database(':memory:');
  try {
    db.exec("CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'porter unicode61')");
    const insert = db.prepare('INSERT INTO t (text) VALUES (?)');
    db.transaction(() => texts.forEach((text) => insert.run(text)))();
    const search = db.prepare(`SELECT text, -bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY bm25(t) LIMIT ${k + 5}`);
    return queries.map((q) => inOrder(search.all(fullTextTerms(q).map((w) => `"${w}"`).join(' OR ')) as Hit[]).slice(0, k));
  } finally {
    db.close();
  }
}

/**
 * Hits by score, those within 1e-4 of each other by text: two rankings that differ only in
 * near-ties (a word in most chunks weighs 1e-6 on one engine and is left out on the other) come
 * out in the same order.
 */
function inOrder(hits: readonly Hit[]): Hit[] {
  const sorted = [...hits].sort((a, b) => b.score - a.score);
  const ordered: Hit[] = [];
  for (let start = 0; start < sorted.length; ) {
    let end = start + 1;
    while (end < sorted.length && sorted[start]!.score - sorted[end]!.score < 1e-4) end++;
    ordered.push(...sorted.slice(start, end).sort((a, b) => (a.text < b.text ? -1 : 1)));
    start = end;
  }
  return ordered;
}

/** The store's top k for each query, as `inOrder` sorts them. */
async function storeTop(store: TrellisStore, scope: KbScope, queries: readonly string[], k: number): Promise<Hit[][]> {
  const tops = [];
  for (const q of queries) tops.push(inOrder((await store.repositories.chunks.searchChunksFullText(scope, q, k + 5)).map((h) => ({ text: h.chunk.text, score: h.score }))).slice(0, k));
  return tops;
}

/** The same texts in the same order, each score within 1e-4 of FTS5's. */
function expectFts5Ranking(actual: readonly Hit[][], expected: readonly Hit[][]): void {
  expect(actual.map((hits) => hits.map((h) => h.text))).toEqual(expected.map((hits) => hits.map((h) => h.text)));
  actual.forEach((hits, q) => hits.forEach((h, i) => expect(Math.abs(h.score - expected[q]![i]!.score)).toBeLessThan(1e-4)));
}

async function fillPages(store: TrellisStore, scope: KbScope): Promise<void> {
  await saveTestDocument(store, scope, 'docs');
  await store.repositories.chunks.upsertChunks(scope, PAGES.map((page, i) => chunk('docs', 1, i, page, i + 1)));
}

/**
 * Full-text search as both engines must answer it, on corpora where the bounded search could
 * go wrong: a common term matching most chunks, other knowledge bases with better matches,
 * chunks of a replaced document version ranked first. Both stores run the same expectations,
 * so they agree on these rankings.
 */
export function describeFullTextContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: full-text search`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const texts = async (query: string, k: number, at = scope) => (await store.repositories.chunks.searchChunksFullText(at, query, k)).map((h) => h.chunk.text);

    async function fill(at: KbScope, documentId: string, lines: readonly string[]): Promise<void> {
      await saveTestDocument(store, at, documentId);
      await store.repositories.chunks.upsertChunks(at, lines.map((line, i) => chunk(documentId, 1, i, line, i + 1)));
    }

    it("ranks the NestJS pages for their questions and for second-hop queries as FTS5's bm25() did", async () => {
      await fillPages(store, scope);
      expectFts5Ranking(await storeTop(store, scope, QUERIES, 10), fts5Top(PAGES, QUERIES, 10));
    });

    it('finds the one chunk of a rare term among many chunks of a common one, first', async () => {
      const common = Array.from({ length: 120 }, (_, i) => `river boats carry cargo number ${i}`);
      await fill(scope, 'd1', [...common.slice(0, 60), 'river otter colony', ...common.slice(60)]);
      expect(await texts('otter', 5)).toEqual(['river otter colony']);
      const hits = await texts('river otter', 5);
      expect(hits[0]).toBe('river otter colony');
      expect(hits).toHaveLength(5);
      // Every chunk has "river": a k past them all returns them all, the rare one first.
      const all = await texts('river otter', 500);
      expect(all).toHaveLength(121);
      expect(all[0]).toBe('river otter colony');
    });

    it('ranks chunks matching more of the rare terms first, on both engines alike', async () => {
      await fill(scope, 'd1', [
        'the harbour master logs tide tables daily',
        'tide tables and lunar cycles predict flooding',
        'lunar cycles shape tide tables and spring flooding in estuaries',
        'a harbour cat sleeps on warm stones',
        'daily logs of cargo in the harbour',
        'stones and stones',
      ]);
      expect((await texts('lunar flooding estuaries', 3)).slice(0, 2)).toEqual([
        'lunar cycles shape tide tables and spring flooding in estuaries',
        'tide tables and lunar cycles predict flooding',
      ]);
      expect(await texts('harbour cat', 1)).toEqual(['a harbour cat sleeps on warm stones']);
    });

    it('weighs a term in half of the chunks or more at almost nothing: a rare term outranks many common ones', async () => {
      // Like hybrid's second hop: a question plus names that most pages of the corpus hold.
      const common = Array.from({ length: 11 }, (_, i) => `nest module controller provider guard pipe ${i}`);
      const filler = Array.from({ length: 8 }, (_, i) => `unrelated text number ${i}`);
      await fill(scope, 'd1', [...common, 'an interceptor wraps the call', ...filler]);
      const hits = await texts('interceptor nest module controller provider guard pipe', 3);
      expect(hits[0]).toBe('an interceptor wraps the call');
    });

    it("searches its own knowledge base only: another's better matches neither show nor crowd out its own", async () => {
      const other = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: scope.tenantId }, { name: 'other', description: '', settings: TEST_KB_SETTINGS });
      const otherScope = { tenantId: scope.tenantId, kbId: other.id };
      await fill(otherScope, 'o1', Array.from({ length: 50 }, (_, i) => `glacier glacier glacier melt ${i}`));
      await fill(scope, 'd1', ['a glacier far away', 'nothing about ice']);
      expect(await texts('glacier melt', 3)).toEqual(['a glacier far away']);
      expect(await texts('glacier', 60, otherScope)).toHaveLength(50);
      // Another tenant naming the same knowledge base sees nothing.
      expect(await texts('glacier', 5, { tenantId: 'someone-else', kbId: scope.kbId })).toEqual([]);
    });

    it('returns current chunks only, however many chunks of a replaced version rank above them', async () => {
      await fill(scope, 'd1', Array.from({ length: 40 }, (_, i) => `comet comet comet tail ${i}`));
      await saveTestDocument(store, scope, 'd1', 2);
      // Version 2 is the current one; version 1's chunks are still indexed until they are removed.
      await store.repositories.chunks.upsertChunks(scope, [chunk('d1', 2, 0, 'a comet among many other words of the new version', 99)]);
      expect(await texts('comet', 1)).toEqual(['a comet among many other words of the new version']);
      expect(await texts('comet', 10)).toEqual(['a comet among many other words of the new version']);
    });
  });
}

/**
 * A database whose full text was analysed otherwise (before migration 24 on the MySQL family):
 * `rewind` takes the store back to before that migration and runs it; the rankings must then
 * be FTS5's, as for chunks written since.
 */
export function describeFullTextReanalysis(name: string, makeStore: () => Promise<TrellisStore>, rewind: (store: TrellisStore) => Promise<void>): void {
  describe(`${name}: full text of a database from before its analysis changed`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    it('ranks the chunks written before as FTS5 did, once the migration has run', async () => {
      await fillPages(store, scope);
      await rewind(store);
      const questions = QUERIES.filter((_, i) => i % 2 === 0);
      expectFts5Ranking(await storeTop(store, scope, questions, 10), fts5Top(PAGES, questions, 10));
    });
  });
}
