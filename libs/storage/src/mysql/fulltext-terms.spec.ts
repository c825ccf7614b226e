import { describe, expect, it } from 'vitest';
import { MAX_TERM_LENGTH } from '../query-terms';
import { documentTerms, queryTerms, stemTerm } from './fulltext-terms';
import { doubleLiteral } from './fulltext-index';

describe('full-text terms', () => {
  it('stems plurals lightly and leaves other words alone', () => {
    expect(['discoveries', 'elements', 'glass', 'status', 'gas', 'is', 'données'].map(stemTerm)).toEqual([
      'discovery', 'element', 'glass', 'status', 'gas', 'is', 'données',
    ]);
  });

  it('normalises documents exactly as queries, so both meet', () => {
    const doc = documentTerms('The Elements: polonium and RADIUM; radium glows. 42 x');
    expect(Object.fromEntries(doc.frequencies)).toEqual({ element: 1, polonium: 1, radium: 2, glow: 1, '42': 1 });
    expect(doc.length).toBe(6);
    expect(queryTerms('the elements of Radium')).toEqual(['element', 'radium']);
  });

  it('cuts long terms on code points, in documents and queries alike', () => {
    const long = '𝒶'.repeat(MAX_TERM_LENGTH + 5); // a letter outside the BMP: two UTF-16 units
    const [term] = queryTerms(long);
    expect(Array.from(term!)).toHaveLength(MAX_TERM_LENGTH);
    expect([...documentTerms(long).frequencies.keys()]).toEqual([term]);
  });

  it('inlines BM25 constants as DOUBLE literals', () => {
    expect(doubleLiteral(2.2)).toBe('2.2e+0');
    expect(() => doubleLiteral(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
