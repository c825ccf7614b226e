import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { fullTextTerms } from '../query-terms';
import { porterDocumentTerms, porterQueryTerms, porterTerm } from './porter-terms';
import { TextPostings } from './text-postings';

const DATASET = join(__dirname, '../../../../datasets/nestjs-docs');
const lines = (file: string) => readFileSync(join(DATASET, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, string>);
const passages = lines('corpus.jsonl').map((p) => `${p.title}\n${p.text}`);
const questions = lines('questions.jsonl').map((q) => q.question!);

/** Names with diacritics and other scripts, which unicode61 folds (one mark on a Latin letter) or keeps. */
const WORLD = 'Café Ñandú Gdańsk Dvořák Zürich façade naïve thần Việt Σφακιανάκης Ελλάς ガンマー第3号 이별 Москва e2e 1970s 9ms';

/** An FTS5 table of one column with the tokenizer the standalone store used until the in-memory index. */
function fts5(texts: readonly string[]): Database.Database {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'porter unicode61'); CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
  const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
  db.transaction(() => texts.forEach((text, i) => insert.run(i + 1, text)))();
  return db;
}

describe('porter terms', () => {
  it("makes of every word of the NestJS corpus the term FTS5's porter unicode61 tokenizer made", () => {
    const words = [...new Set(`${passages.join(' ')} ${WORLD}`.toLowerCase().match(/[\p{L}\p{N}]+/gu))];
    const db = fts5(words);
    const fts5Terms = new Map(db.prepare('SELECT doc, term FROM v').all().map((r) => { const row = r as { doc: number; term: string }; return [words[row.doc - 1]!, row.term]; }));
    const different = words.filter((word) => porterTerm(word) !== fts5Terms.get(word)).map((word) => `${word}: ${porterTerm(word)} / ${fts5Terms.get(word)}`);
    expect(words.length).toBeGreaterThan(3_000);
    expect(different).toEqual([]);
    expect(['throwing', 'validation', 'one', 'café'].map(porterTerm)).toEqual(['throw', 'valid', 'on', 'cafe']);
  });

  it('ranks the NestJS questions, and the same with names added as the second hop does, exactly as FTS5 bm25() did', () => {
    const db = fts5(passages);
    const index = new TextPostings();
    // Ids in rowid order as strings too: both break ties by id.
    const idOf = (rowid: number) => String(rowid).padStart(4, '0');
    passages.forEach((text, i) => index.put({ id: idOf(i + 1), documentId: 'd', stamp: '', terms: porterDocumentTerms(text) }));
    const search = db.prepare('SELECT rowid AS id, -bm25(t) AS score FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT 10');
    const hopped = questions.map((q, i) => `${q} ${passages[i]!.match(/\b[A-Z][a-z]+[A-Z]\w*/g)?.slice(0, 12).join(' ') ?? ''}`);
    for (const query of [...questions, ...hopped]) {
      // FTS5 is given the words, as the store gave them, and stems them itself.
      const expected = search.all(fullTextTerms(query).map((t) => `"${t}"`).join(' OR ')) as Array<{ id: number; score: number }>;
      const actual = index.search(porterQueryTerms(query), 10);
      expect(actual.map((h) => h.id), query).toEqual(expected.map((r) => idOf(r.id)));
      actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 6));
    }
  });
});
