/**
 * Proper-name phrases: capitalised words, possibly joined by a few lowercase particles
 * ("Museum of Modern Art", "Ludwig van Beethoven"), never across lines.
 */
const NAME_PHRASE = /\b[A-Z][\p{L}\p{N}'.-]*(?:[^\S\n]+(?:(?:of|the|de|von|van)[^\S\n]+)?[A-Z][\p{L}\p{N}'.-]*)*/gu;
/** Shorter capitalised words ("I", "An") are not names. */
export const MIN_NAME_CHARS = 3;

/** Each proper-name phrase of `text` with where it starts, trailing punctuation dropped. */
export function* namePhrases(text: string): Generator<{ name: string; index: number }> {
  for (const match of text.matchAll(NAME_PHRASE)) yield { name: match[0].replace(/[.'-]+$/, ''), index: match.index };
}

/**
 * The proper names a question asks about, as written ("Killing Joke", "Led Zeppelin"): what a
 * ranking should cover. A single capitalised word opening the question is its question word
 * ("Which", "How"), not a name.
 */
export function questionNames(question: string): string[] {
  const names = new Set<string>();
  for (const { name, index } of namePhrases(question)) {
    const opensQuestion = question.slice(0, index).trim() === '' && !/\s/.test(name);
    if (name.length >= MIN_NAME_CHARS && !opensQuestion) names.add(name);
  }
  return [...names];
}
