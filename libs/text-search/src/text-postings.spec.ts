import { describe, expect, it, vi } from 'vitest';
import { stampDigest } from '@trellis/vectors';
import { BM25_B, BM25_K1, bm25Idf } from './bm25';
import { porterDocumentTerms, porterQueryTerms } from './porter-terms';
import { TextPostings } from './text-postings';
import type { TextHit } from './text-postings';

const WORDS = 'amber basalt cedar delta ember fjord garnet harbor iris jade kelp lumen moss nectar opal quartz river slate tundra umber'.split(' ');

/** A deterministic pseudo-random sequence (xorshift), so a failure can be run again. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

type Analysed = ReadonlyArray<{ id: string; documentId: string; terms: ReturnType<typeof porterDocumentTerms> }>;

/** BM25 of every chunk, written out from the formula: what the index must return. */
function reference(chunks: ReadonlyMap<string, { documentId: string; text: string }>, query: string, k: number, documents?: ReadonlySet<string>): TextHit[] {
  return referenceOf([...chunks].map(([id, c]) => ({ id, documentId: c.documentId, terms: porterDocumentTerms(c.text) })), query, k, documents);
}

function referenceOf(analysed: Analysed, query: string, k: number, documents?: ReadonlySet<string>): TextHit[] {
  const average = Math.max(1, analysed.reduce((n, c) => n + c.terms.length, 0) / analysed.length);
  const terms = porterQueryTerms(query);
  const df = new Map([...terms.keys()].map((term) => [term, analysed.filter((c) => c.terms.frequencies.has(term)).length]));
  const hits: TextHit[] = [];
  for (const c of analysed) {
    let score = 0;
    for (const [term, times] of terms) {
      const tf = c.terms.frequencies.get(term) ?? 0;
      if (tf === 0) continue;
      score += (times * bm25Idf(df.get(term)!, analysed.length) * tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * c.terms.length) / average));
    }
    if (score > 0 && (documents === undefined || documents.has(c.documentId))) hits.push({ id: c.id, score });
  }
  return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k);
}

const put = (index: TextPostings, id: string, documentId: string, text: string) => index.put({ id, documentId, stamp: text, terms: porterDocumentTerms(text) });

function expectSame(actual: readonly TextHit[], expected: readonly TextHit[]): void {
  expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
  actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
}

describe('TextPostings', () => {
  it('ranks exactly as BM25 written out, through puts, replacements, removals and compactions', async () => {
    const next = random(7);
    const index = new TextPostings();
    const chunks = new Map<string, { documentId: string; text: string }>();
    const sentence = () => Array.from({ length: 3 + Math.floor(next() * 12) }, () => WORDS[Math.floor(next() ** 2 * WORDS.length)]).join(' ');
    for (let round = 0; round < 6; round++) {
      // Enough writes each round that the index compacts (past MIN_DEAD_SLOTS and MIN_RECENT_POSTINGS).
      for (let i = 0; i < 6_000; i++) {
        const id = `c${Math.floor(next() * 5_000)}`;
        if (next() < 0.2) {
          index.remove(id);
          chunks.delete(id);
        } else {
          const chunk = { documentId: `d${Math.floor(next() * 50)}`, text: sentence() };
          put(index, id, chunk.documentId, chunk.text);
          chunks.set(id, chunk);
        }
        await index.compactIfDue();
      }
      const expectReference = () => {
        expect(index.size).toBe(chunks.size);
        for (const query of ['amber', 'umber slate', 'quartz river iris', 'moss and the nectar', 'rivers river', 'absent words']) {
          expectSame(index.search(porterQueryTerms(query), 10, undefined), reference(chunks, query, 10));
        }
        const documents = new Set(['d3', 'd4']);
        expectSame(index.search(porterQueryTerms('tundra umber'), 5, documents), reference(chunks, 'tundra umber', 5, documents));
      };
      expectReference();
      // With no removed chunk held, document frequencies are read from the postings' lengths.
      await index.compact();
      expectReference();
      for (let i = 0; i < 100; i++) {
        const chunk = { documentId: `d${i % 50}`, text: sentence() };
        put(index, `new${round}-${i}`, chunk.documentId, chunk.text);
        chunks.set(`new${round}-${i}`, chunk);
      }
      expectReference();
    }
  });

  it('returns every match when k is past them, ties in id order, and stamps per chunk', () => {
    const index = new TextPostings();
    for (const id of ['b', 'c', 'a']) put(index, id, 'd', 'same words here');
    put(index, 'z', 'd', 'other text');
    expect(index.search(porterQueryTerms('words'), 50).map((h) => h.id)).toEqual(['a', 'b', 'c']);
    expect([index.holds('a', stampDigest('same words here')), index.holds('a', stampDigest('other words'))]).toEqual([true, false]);
    put(index, 'a', 'd', 'changed text');
    expect([index.holds('a', stampDigest('changed text')), index.holds('a', stampDigest('same words here'))]).toEqual([true, false]);
    expect(index.search(porterQueryTerms('words'), 50).map((h) => h.id)).toEqual(['b', 'c']);
    expect([...index.chunkIds()].sort()).toEqual(['a', 'b', 'c', 'z']);
  });

  it("keeps each chunk's stamp as slots grow past their first arrays and as a compaction renumbers them", async () => {
    const index = new TextPostings();
    for (let i = 0; i < 1500; i++) put(index, `c${i}`, `d${i % 7}`, `text number ${i}`);
    for (let i = 0; i < 1500; i += 2) index.remove(`c${i}`);
    await index.compact();
    expect([index.holds('c1', stampDigest('text number 1')), index.holds('c1499', stampDigest('text number 1499')), index.holds('c1499', stampDigest('text number 1497')), index.holds('c0', stampDigest('text number 0'))]).toEqual([true, true, false, false]);
    expect([...index.chunkIds()].every((id) => index.holds(id, stampDigest(`text number ${id.slice(1)}`)))).toBe(true);
  });

  it('counts only the chunks it holds: a removed chunk no longer weighs on its terms', () => {
    const index = new TextPostings();
    put(index, 'rare', 'd', 'walrus colony');
    for (let i = 0; i < 9; i++) put(index, `w${i}`, 'd', 'walrus walrus');
    const before = index.search(porterQueryTerms('colony walrus'), 1)[0]!.score;
    for (let i = 0; i < 9; i++) index.remove(`w${i}`);
    expect(index.search(porterQueryTerms('walrus'), 10).map((h) => h.id)).toEqual(['rare']);
    expect(index.search(porterQueryTerms('colony walrus'), 1)[0]!.score).not.toBeCloseTo(before, 6);
    expect(index.search(porterQueryTerms('walrus'), 0)).toEqual([]);
  });

  it('reads the common terms of a question only for the chunks that can still rank, with the ranking BM25 written out gives', async () => {
    // Words drawn by a Zipf law, as in text: a few in most chunks, most in a few.
    const vocabulary = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}x`);
    const next = random(11);
    const zipf = () => vocabulary[Math.min(vocabulary.length - 1, Math.floor(1 / (next() + 1 / vocabulary.length)) - 1)]!;
    const index = new TextPostings();
    const analysed: Array<{ id: string; documentId: string; terms: ReturnType<typeof porterDocumentTerms> }> = [];
    for (let i = 0; i < 12_000; i++) {
      const text = Array.from({ length: 8 + Math.floor(next() * 40) }, zipf).join(' ');
      const chunk = { id: `c${i}`, documentId: `d${i % 300}`, terms: porterDocumentTerms(text) };
      analysed.push(chunk);
      index.put({ ...chunk, stamp: text });
      // Half compacted, half still recent postings: both are looked up.
      if (i === 6_000) await index.compact();
    }
    const read = vi.spyOn(index as unknown as { eachPosting: (term: number, visit: unknown) => void }, 'eachPosting');
    const queries = ['w1x w2x w3x w1a2x w2bcx', 'w0x w4x w5x w7x w9x w1000x', 'w2x w3x w5x w8x w13x w21x w34x w55x w89x w144x w233x w377x', 'w1x w2x'];
    for (const [i, query] of queries.entries()) {
      for (const k of [1, 10, 30]) expectSame(index.search(porterQueryTerms(query), k), referenceOf(analysed, query, k));
      const documents = new Set([`d${i}`, `d${i + 7}`, `d${i + 99}`]);
      expectSame(index.search(porterQueryTerms(query), 5, documents), referenceOf(analysed, query, 5, documents));
    }
    // The rare terms were read through; for the long question with k = 1, its six most common of twelve were not.
    read.mockClear();
    index.search(porterQueryTerms(queries[2]!), 1);
    expect(read.mock.calls.length).toBe(6);
  });
});
