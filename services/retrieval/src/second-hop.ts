import { MIN_NAME_CHARS, namePhrases } from '@trellis/models';

/** The question's own names (proper-name phrases, lexical): shared with chat's follow-up condensation. */
export { questionNames } from '@trellis/models';

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
