import { countTokens, countTokensUpTo } from '../token-counter';
import { framedText } from './markdown-blocks';
import { cutInsideWord } from './oversize-cuts';
import type { Unit } from './oversize-cuts';

/**
 * A fenced code block or a table as units: the whole block when it fits a chunk; otherwise
 * pieces of whole lines, each framed again by the block's head and foot (the opening fence
 * with its info string and the closing fence, or a table's header and delimiter rows), so
 * every piece is valid markdown on its own. Only a line longer than a piece is cut inside.
 * Undefined when the frame itself takes more than half a chunk (a hostile fence or header
 * line): the caller then splits the block as prose.
 */
export function* framedUnits(head: readonly string[], lines: readonly string[], foot: readonly string[], chunkSize: number): Generator<void, Unit[] | undefined> {
  const whole = framedText(head, lines, foot);
  const wholeTokens = countTokensUpTo(whole, chunkSize);
  yield;
  if (wholeTokens <= chunkSize) return [blockUnit(whole, wholeTokens)];
  const frameTokens = countTokensUpTo(framedText(head, [], foot), chunkSize);
  // Newlines join the lines to the frame, and tokens may merge where they meet.
  const budget = chunkSize - frameTokens - 4;
  if (frameTokens > chunkSize / 2 || budget < 4) return undefined;

  const pieces: string[][] = [];
  let current: string[] = [];
  let estimate = 0;
  const flush = function* (): Generator<void> {
    while (current.length > 0) {
      // The piece's own count is what must fit; lines that tip it over start the next piece.
      const carried: string[] = [];
      while (countTokens(framedText(head, current, foot)) > chunkSize && current.length > 1) {
        carried.unshift(current.pop()!);
        yield;
      }
      pieces.push(current);
      current = carried;
      estimate = 0;
      for (const line of current) estimate += countTokens(line) + 1;
    }
  };
  for (const line of lines) {
    const lineTokens = countTokensUpTo(line, budget) + 1;
    yield;
    if (lineTokens > budget) {
      yield* flush();
      for (const part of yield* cutInsideWord(line, budget)) pieces.push([part.text]);
      continue;
    }
    if (estimate + lineTokens > budget) yield* flush();
    current.push(line);
    estimate += lineTokens;
  }
  yield* flush();
  return pieces.map((piece) => {
    const text = framedText(head, piece, foot);
    return blockUnit(text, countTokens(text));
  });
}

/** A block stands as its own paragraph in a chunk. */
function blockUnit(text: string, tokens: number): Unit {
  return { text: `${text}\n\n`, tokens };
}
