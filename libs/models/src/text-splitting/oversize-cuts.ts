import { MAX_PIECE_LENGTH, countTokens, countTokensUpTo, windows } from '../token-counter';

/** A piece of text the packer places whole, with its token count. */
export interface Unit {
  text: string;
  tokens: number;
}

/** A sentence longer than a chunk, cut between words into pieces of at most `chunkSize` tokens. */
export function* cutByWords(sentence: string, chunkSize: number): Generator<void, Unit[]> {
  const pieces: Unit[] = [];
  let current: string[] = [];
  let tokens = 0;
  // A piece's own count is what must fit: words counted one by one add up to about it, and
  // the few that tip it over start the next piece.
  const flush = () => {
    while (current.length > 0) {
      const carried: string[] = [];
      let text = current.join(' ');
      let real = countTokens(text);
      while (real > chunkSize && current.length > 1) {
        carried.unshift(current.pop()!);
        text = current.join(' ');
        real = countTokens(text);
      }
      pieces.push({ text, tokens: real });
      current = carried;
    }
    tokens = 0;
  };
  for (const word of sentence.split(/\s+/)) {
    const wordTokens = countTokensUpTo(` ${word}`, chunkSize);
    yield;
    if (wordTokens > chunkSize) {
      flush();
      pieces.push(...(yield* cutInsideWord(word, chunkSize)));
      continue;
    }
    if (tokens + wordTokens > chunkSize) flush();
    current.push(word);
    tokens += wordTokens;
  }
  flush();
  return pieces;
}

/**
 * Cuts a word longer than a chunk into pieces of at most `chunkSize` tokens (for any size of
 * at least four: a character is at most four tokens). The word is taken in small windows that
 * always fit; a piece whose own count comes out over the budget gives back windows until it fits.
 */
export function* cutInsideWord(word: string, chunkSize: number): Generator<void, Unit[]> {
  const parts = windows(word, Math.max(1, Math.min(MAX_PIECE_LENGTH, Math.floor(chunkSize / 4))));
  const pieces: Unit[] = [];
  let start = 0;
  while (start < parts.length) {
    let end = start;
    let estimate = 0;
    while (end < parts.length) {
      const next = countTokens(parts[end]!);
      yield;
      if (end > start && estimate + next > chunkSize) break;
      estimate += next;
      end++;
    }
    let text = parts.slice(start, end).join('');
    let tokens = countTokens(text);
    while (tokens > chunkSize && end - start > 1) {
      end--;
      text = parts.slice(start, end).join('');
      tokens = countTokens(text);
    }
    pieces.push({ text, tokens });
    start = end;
  }
  return pieces;
}
