import nlp from 'compromise';
import { ADMONITION_LABELS } from './prose-view';

/** Word classes that frame a sentence and never name a thing ("If", "This", "However"). */
const FUNCTION_TAGS = ['Conjunction', 'Determiner', 'Pronoun', 'Preposition', 'Adverb', 'QuestionWord', 'Modal', 'Auxiliary', 'Copula'];

/**
 * A mention's text made into an entity name, or null when it names nothing: possessives,
 * leading common words and articles are dropped; a name must carry a capital or a digit; a
 * name that is still code or markup (a call, brackets, operators) or that is a single
 * function word or admonition label capitalised by its place in the sentence is refused.
 */
export function cleanName(raw: string): string | null {
  const name = raw
    .replace(/['’]s$/u, '')
    // Drop leading common words ("brother Jacques Curie" → "Jacques Curie").
    .replace(/^(?:[\p{Ll}][\p{L}'-]*\s+)+(?=\p{Lu})/u, '')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N})]+$/gu, '')
    .replace(/^(the|a|an)\s+/i, '')
    .replace(/\s+/g, ' ')
    .trim()
    // A closing parenthesis belongs to the name only when the name opened it.
    .replace(/\)+$/, (closing, offset: number, whole: string) => (whole.slice(0, offset).includes('(') ? closing : ''));
  if (name.length < 2 || name.length > 80) return null;
  if (name.split(' ').length > 8) return null;
  // Names carry a capital or a number; "first woman" and "few months" are not entities.
  if (!/\p{Lu}|\d/u.test(name)) return null;
  if (/[`*<>{}[\]=;|\\]|[\p{L}\p{N}_$]\(/u.test(name)) return null;
  if (!name.includes(' ') && isDiscourseWord(name)) return null;
  return name;
}

/** Words already tagged; cleared when full, so a long-running extractor's memory stays bounded. */
const discourseCache = new Map<string, boolean>();
const DISCOURSE_CACHE_WORDS = 10_000;

/** "If", "This", "We", "Hint": a word that structures text rather than naming something. */
export function isDiscourseWord(word: string): boolean {
  const lower = word.toLowerCase();
  if (ADMONITION_LABELS.has(lower)) return true;
  let known = discourseCache.get(lower);
  if (known === undefined) {
    const tags = (nlp(lower).json() as Array<{ terms?: Array<{ tags?: string[] }> }>)[0]?.terms?.[0]?.tags ?? [];
    known = tags.some((t) => FUNCTION_TAGS.includes(t));
    if (discourseCache.size >= DISCOURSE_CACHE_WORDS) discourseCache.clear();
    discourseCache.set(lower, known);
  }
  return known;
}
