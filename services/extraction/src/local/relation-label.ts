/** A verb found in the chunk, with its offset (compromise's `#Verb+` matches). */
export interface VerbSpan {
  text: string;
  offset: { start: number; length: number };
}

const FOLLOWING_PREPOSITION = /^\s+(in|at|on|of|by|with|for|from|to|into|as)\b/i;
/** A preposition alone between two names ("Kamil Myśliwiec of Trilon", "Redis in Kubernetes"). */
const PREPOSITION_ONLY = /^,?\s*(in|at|on|of|by|with|for|from|into|inside|within|under|near|via|over)(?:\s+(?:the|a|an))?\s*$/i;
/** The second name in parentheses right after the first: another name for the same thing. */
const PARENTHESISED = /^\s*\(\s*$/;

/**
 * The label of a relationship between two mentions of one sentence, read from the text that
 * lies between them: the first verb phrase with its trailing preposition ("was born in"),
 * else the preposition that links the two noun phrases ("of"), else "also called" for a name
 * given in parentheses, else null (no relation phrase: the caller says "related to").
 */
export function relationLabel(verbs: readonly VerbSpan[], from: number, to: number, text: string): { label: string; verbal: boolean } | null {
  if (to - from > 160) return null;
  const verb = verbs.find((v) => v.offset.start >= from && v.offset.start + v.offset.length <= to);
  if (verb) {
    const end = verb.offset.start + verb.offset.length;
    const after = FOLLOWING_PREPOSITION.exec(text.slice(end, Math.min(to, end + 8)))?.[1];
    const phrase = `${verb.text}${after ? ` ${after}` : ''}`.toLowerCase().replace(/[^\p{L}\p{N}' -]/gu, '').replace(/\s+/g, ' ').trim();
    if (phrase !== '') return { label: phrase.slice(0, 60), verbal: true };
  }
  const gap = text.slice(from, to);
  const preposition = PREPOSITION_ONLY.exec(gap)?.[1];
  if (preposition) return { label: preposition.toLowerCase(), verbal: false };
  if (PARENTHESISED.test(gap)) return { label: 'also called', verbal: false };
  return null;
}
