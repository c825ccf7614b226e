const STOPWORDS = new Set(
  'a an and are as at be by for from has have he her his in is it its of on or she that the their they this to was were what when where which who whom whose why with how did does do'.split(' '),
);

/** Lower-case words of a query worth matching: letters and digits, no stopwords. */
export function fullTextTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 64);
}

/** Longest indexed term, in characters: longer runs (hashes, base64) are cut, in queries too. */
export const MAX_TERM_LENGTH = 64;

/** `term` cut to MAX_TERM_LENGTH code points (a split surrogate pair is not valid utf8mb4). */
export function cutTerm(term: string): string {
  return term.length > MAX_TERM_LENGTH ? Array.from(term).slice(0, MAX_TERM_LENGTH).join('') : term;
}
