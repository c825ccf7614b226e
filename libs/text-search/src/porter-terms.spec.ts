import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { porterDocumentTerms, porterQueryTerms, porterTerm } from './porter-terms';

const CORPUS = join(__dirname, '../../../datasets/nestjs-docs/corpus.jsonl');
const passages = readFileSync(CORPUS, 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { text: string }).text);

/** Names with diacritics and in other scripts, which unicode61 folds (one mark on a Latin letter) or keeps. */
const WORLD = 'Café Ñandú Gdańsk Dvořák Zürich façade naïve thần Việt Σφακιανάκης Ελλάς ガンマー第3号 이별 Москва e2e 1970s 9ms';

/** Each word's term as SQLite's FTS5 makes it with the tokenizer the standalone store used until its full text moved in memory. */
function fts5Terms(words: readonly string[]): Map<string, string> {
  const db = new Database(':memory:');
  try {
    db.exec("CREATE VIRTUAL TABLE t USING fts5 (text, tokenize = 'porter unicode61'); CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
    const insert = db.prepare('INSERT INTO t (rowid, text) VALUES (?, ?)');
    db.transaction(() => words.forEach((word, i) => insert.run(i + 1, word)))();
    const rows = db.prepare('SELECT doc, term FROM v').all() as Array<{ doc: number; term: string }>;
    return new Map(rows.map((row) => [words[row.doc - 1]!, row.term]));
  } finally {
    db.close();
  }
}

describe('porter terms', () => {
  it("makes of every word of the NestJS corpus, and of names in six scripts, the term FTS5's porter unicode61 tokenizer makes", () => {
    const words = [...new Set(`${passages.join(' ')} ${WORLD}`.toLowerCase().match(/[\p{L}\p{N}]+/gu))];
    const expected = fts5Terms(words);
    expect(words.length).toBeGreaterThan(3_000);
    expect(words.filter((word) => porterTerm(word) !== expected.get(word)).map((word) => `${word}: ${porterTerm(word)}, FTS5 ${expected.get(word)}`)).toEqual([]);
    expect(['throwing', 'validation', 'one', 'café'].map(porterTerm)).toEqual(['throw', 'valid', 'on', 'cafe']);
  });

  it('indexes every word of a text and counts a stem once per distinct query word', () => {
    const terms = porterDocumentTerms('The pipes of a pipe');
    expect(terms.length).toBe(5);
    expect([...terms.frequencies]).toEqual([['the', 1], ['pipe', 2], ['of', 1], ['a', 1]]);
    expect([...porterQueryTerms('the pipe, pipes and PIPES of one')]).toEqual([['pipe', 2], ['on', 1]]);
  });
});
