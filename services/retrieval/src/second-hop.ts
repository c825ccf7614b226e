/**
 * Proper-name phrases: capitalised words, possibly joined by a few lowercase particles
 * ("Museum of Modern Art", "Ludwig van Beethoven"), never across lines.
 */
const NAME_PHRASE = /\b[A-Z][\p{L}\p{N}'.-]*(?:[^\S\n]+(?:(?:of|the|de|von|van)[^\S\n]+)?[A-Z][\p{L}\p{N}'.-]*)*/gu;
const MIN_NAME_CHARS = 3;

/**
 * The names a passage mentions that the question does not: what a second hop should look
 * for. A multi-hop question names the first passage's subject; the answer's passage is
 * about something that first passage names (the film's director, the album's singer).
 * Lexical, so it needs no model; first-seen order, at most `max`.
 */
export function secondHopNames(passage: string, question: string, max: number): string[] {
  const asked = question.toLowerCase();
  const names = new Set<string>();
  for (const { name } of namePhrases(passage)) {
    if (name.length < MIN_NAME_CHARS || asked.includes(name.toLowerCase())) continue;
    names.add(name);
    if (names.size >= max) break;
  }
  return [...names];
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

/** Each proper-name phrase of `text` with where it starts, trailing punctuation dropped. */
function* namePhrases(text: string): Generator<{ name: string; index: number }> {
  for (const match of text.matchAll(NAME_PHRASE)) yield { name: match[0].replace(/[.'-]+$/, ''), index: match.index };
}
