/** Longest derived summary kept on an entity or relationship, in characters. */
export const MAX_SUMMARY_CHARS = 2000;

/**
 * An entity's or relationship's summary, derived from the descriptions its mentions carry:
 * distinct descriptions in mention order, joined, capped. Recomputable at any time, which is
 * what lets deletion and re-indexing leave no stale text behind.
 */
export function summarizeDescriptions(descriptions: readonly string[]): string {
  const seen = new Set<string>();
  const parts: string[] = [];
  let length = 0;
  for (const raw of descriptions) {
    const d = raw.trim();
    const key = d.toLowerCase();
    if (d === '' || seen.has(key)) continue;
    seen.add(key);
    if (length + d.length > MAX_SUMMARY_CHARS) break;
    parts.push(d);
    length += d.length + 1;
  }
  return parts.join(' ');
}

const STOPWORDS = new Set(
  'a an and are as at be by for from has have he her his in is it its of on or she that the their they this to was were what when where which who whom whose why with how did does do'.split(' '),
);

/** Lower-case words of a query worth matching: letters and digits, no stopwords. */
export function fullTextTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w))))].slice(0, 64);
}
