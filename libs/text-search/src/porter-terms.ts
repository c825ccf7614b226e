import stemmer from 'stemmer';
import { cutTerm, fullTextTerms } from './query-terms';
import type { DocumentTerms } from './document-terms';

const WORD = /[\p{L}\p{N}]+/gu;
const ASCII = /^[\x00-\x7f]*$/;
const STEMMED = /^[a-z0-9]+$/;
/** Words remembered with their term; past this many the memory starts over. */
const MAX_REMEMBERED = 200_000;

/**
 * A Latin letter with one diacritic, as its base letter ('é' → 'e', 'ñ' → 'n'); other letters
 * as they are. FTS5's unicode61 tokenizer (remove_diacritics 1) folds these and keeps letters
 * with two marks ('ầ') and other scripts; a final sigma becomes σ, as its case folding does.
 */
function foldLetter(letter: string): string {
  if (letter === 'ς') return 'σ';
  const parts = Array.from(letter.normalize('NFD'));
  return parts.length === 2 && /\p{Script=Latin}/u.test(parts[0]!) && /\p{M}/u.test(parts[1]!) ? parts[0]! : letter;
}

const remembered = new Map<string, string>();

/**
 * The term FTS5's `porter unicode61` tokenizer makes of a lower-case word: diacritics folded as
 * unicode61 does, then Porter's stemmer for words of ASCII letters and digits of three or more
 * characters ('throwing' → 'throw', 'validation' → 'valid', 'one' → 'on').
 */
export function porterTerm(word: string): string {
  let term = remembered.get(word);
  if (term !== undefined) return term;
  const folded = ASCII.test(word) ? word : Array.from(word, foldLetter).join('');
  term = cutTerm(folded.length >= 3 && STEMMED.test(folded) ? stemmer(folded) : folded);
  if (remembered.size >= MAX_REMEMBERED) remembered.clear();
  remembered.set(word, term);
  return term;
}

/**
 * The query's terms as SQLite's full text matched them while it was FTS5 with the `porter
 * unicode61` tokenizer, each with the number of the query's distinct words worth matching
 * (`fullTextTerms`) that stem to it: 'pipe pipes' counts 'pipe' twice, as two FTS5 phrases each
 * added their score. Retrieval quality was measured with that ranking.
 */
export function porterQueryTerms(query: string): Map<string, number> {
  const terms = new Map<string, number>();
  for (const word of fullTextTerms(query)) {
    const term = porterTerm(word);
    terms.set(term, (terms.get(term) ?? 0) + 1);
  }
  return terms;
}

/**
 * The terms of a chunk as FTS5's `porter unicode61` indexed them: every word, stopwords and
 * single letters included (a query's stem can be one: 'one' → 'on'), and its length in words.
 */
export function porterDocumentTerms(text: string): DocumentTerms {
  const frequencies = new Map<string, number>();
  let length = 0;
  for (const word of text.toLowerCase().match(WORD) ?? []) {
    const term = porterTerm(word);
    frequencies.set(term, (frequencies.get(term) ?? 0) + 1);
    length++;
  }
  return { frequencies, length };
}
