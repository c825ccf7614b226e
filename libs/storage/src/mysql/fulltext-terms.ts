import { cutTerm, fullTextTerms } from '../query-terms';
import type { DocumentTerms } from '../sql/full-text';

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * A light English plural stemmer (Harman's "S" stemmer): 'discoveries' → 'discovery',
 * 'elements' → 'element', 'glass' and 'status' stay. Conservative on purpose: it merges
 * most plural forms and rarely two different words, and leaves non-ASCII and short words alone.
 */
export function stemTerm(word: string): string {
  if (word.length <= 3 || !/^[a-z]+$/.test(word)) return word;
  if (word.endsWith('ies') && !word.endsWith('eies') && !word.endsWith('aies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && !word.endsWith('aes') && !word.endsWith('ees') && !word.endsWith('oes')) return word.slice(0, -1);
  if (word.endsWith('s') && !word.endsWith('us') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

function normalizeTerm(word: string): string {
  return cutTerm(stemTerm(word));
}

/** The distinct index terms of a query: `fullTextTerms` (words, no stopwords), stemmed. */
export function queryTerms(query: string): string[] {
  return [...new Set(fullTextTerms(query).map(normalizeTerm))];
}

/**
 * The terms of a chunk, counted. A word is kept exactly when `fullTextTerms` would keep it in
 * a query, and gets the same normalisation, so documents and queries always meet.
 */
export function documentTerms(text: string): DocumentTerms {
  const normalized = new Map<string, string | null>();
  const frequencies = new Map<string, number>();
  let length = 0;
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    let term = normalized.get(word);
    if (term === undefined) {
      term = fullTextTerms(word).length > 0 ? normalizeTerm(word) : null;
      normalized.set(word, term);
    }
    if (term === null) continue;
    frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    length++;
  }
  return { frequencies, length };
}
