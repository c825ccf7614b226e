interface Ranks {
  pat_str: string;
}

/** The part of js-tiktoken's encoder this module reads: its byte-sequence → rank table. */
interface RankTable {
  /** Keyed by a token's bytes joined with ',' (js-tiktoken's own key format). */
  rankMap: Map<string, number>;
}

// js-tiktoken declares ESM-only types although it ships CommonJS builds; load the CJS build.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: Ranks) => RankTable };

/**
 * Longest pre-tokenizer piece (in UTF-16 code units) merged whole. The cl100k pre-tokenizer
 * makes one piece of any run of letters, punctuation or whitespace, and byte-pair merging is
 * quadratic in a piece's length (js-tiktoken's own merge made a 20 KB run of letters take
 * minutes). Real words are far shorter than this; longer runs are merged in windows of this
 * length, which keeps counts exact for ordinary text and time linear for any input.
 */
export const MAX_PIECE_LENGTH = 32;

interface Tokenizer {
  ranks: Map<string, number>;
  pieces: RegExp;
  bytes: { encode(text: string): Uint8Array };
}

let loaded: Tokenizer | undefined;

/**
 * Loads the tokenizer now. Its rank table takes about half a second to build, synchronously:
 * a server calls this while it starts, so that the first document it splits does not hold its
 * event loop for that long.
 */
export function loadTokenizer(): void {
  tokenizer();
}

/** The cl100k tokenizer, shipped inside the npm package (no download). */
function tokenizer(): Tokenizer {
  if (loaded === undefined) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ranks = require('js-tiktoken/ranks/cl100k_base') as Ranks;
    loaded = { ranks: new Tiktoken(ranks).rankMap, pieces: new RegExp(ranks.pat_str, 'gu'), bytes: new TextEncoder() };
  }
  return loaded;
}

/**
 * Number of cl100k tokens in `text`: what chunk sizes and LLM budgets are measured in.
 * Equal to cl100k's count for ordinary text, in time linear in the length of `text` whatever
 * it holds. Special-token spellings such as `<|endoftext|>` count as the ordinary text they are.
 */
export function countTokens(text: string): number {
  if (text === '') return 0;
  const tk = tokenizer();
  let count = 0;
  tk.pieces.lastIndex = 0;
  for (let match = tk.pieces.exec(text); match !== null; match = tk.pieces.exec(text)) {
    const piece = match[0];
    if (piece.length <= MAX_PIECE_LENGTH) count += pieceTokens(tk, piece);
    else for (const window of windows(piece, MAX_PIECE_LENGTH)) count += pieceTokens(tk, window);
  }
  return count;
}

/** Bytes of cl100k's longest token: a text of n UTF-16 units has at least n / 128 tokens. */
const LONGEST_TOKEN_BYTES = 128;

/**
 * `countTokens(text)` when it is at most `cap`; otherwise some number above `cap`, found
 * without counting a text too long to possibly fit (what lets callers skip counting a 1 MB
 * "sentence" only to cut it up).
 */
export function countTokensUpTo(text: string, cap: number): number {
  if (text.length > cap * LONGEST_TOKEN_BYTES) return cap + 1;
  return countTokens(text);
}

/**
 * Pieces counted so far, at most MAX_REMEMBERED_PIECES (then it starts over): a piece is at most
 * MAX_PIECE_LENGTH units, its count depends on it alone, and text repeats the same words, so
 * most pieces of a document were counted before (splitting also counts a sentence again when it
 * measures the chunk it joins).
 */
const pieceCounts = new Map<string, number>();
const MAX_REMEMBERED_PIECES = 100_000;

function pieceTokens(tk: Tokenizer, piece: string): number {
  const known = pieceCounts.get(piece);
  if (known !== undefined) return known;
  const bytes = tk.bytes.encode(piece);
  const count = bytes.length === 1 || tk.ranks.has(bytes.join(',')) ? 1 : mergedPartCount(bytes, tk.ranks);
  if (pieceCounts.size >= MAX_REMEMBERED_PIECES) pieceCounts.clear();
  pieceCounts.set(piece, count);
  return count;
}

/**
 * Byte-pair merging as cl100k defines it (always merge the adjacent pair of lowest rank, the
 * leftmost on ties), returning how many parts remain. Pair ranks are kept and only the two
 * neighbours of a merge are looked up again.
 */
function mergedPartCount(bytes: Uint8Array, ranks: Map<string, number>): number {
  const starts: number[] = Array.from({ length: bytes.length + 1 }, (_, i) => i);
  const rankOf = (part: number): number =>
    part + 2 < starts.length ? ranks.get(bytes.subarray(starts[part]!, starts[part + 2]!).join(',')) ?? Infinity : Infinity;
  const pairRanks: number[] = Array.from({ length: bytes.length - 1 }, (_, i) => rankOf(i));
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i < pairRanks.length; i++) {
      if (pairRanks[i]! < bestRank) {
        bestRank = pairRanks[i]!;
        best = i;
      }
    }
    if (best < 0) break;
    starts.splice(best + 1, 1);
    pairRanks.splice(best, 1);
    if (best > 0) pairRanks[best - 1] = rankOf(best - 1);
    if (best < pairRanks.length) pairRanks[best] = rankOf(best);
  }
  return starts.length - 1;
}

/**
 * Consecutive slices of `text` of at most `length` code units (at least one character each),
 * never cutting a surrogate pair in two.
 */
export function windows(text: string, length: number): string[] {
  const result: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + Math.max(1, length));
    if (end < text.length && isLowSurrogate(text.charCodeAt(end))) end = end - 1 > start ? end - 1 : end + 1;
    result.push(text.slice(start, end));
    start = end;
  }
  return result;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Tokens a chat model is billed for each message beyond its content (role and separators), and for priming the reply. */
const TOKENS_PER_MESSAGE = 4;
const TOKENS_PER_REPLY = 3;

/** Input tokens of a chat request as OpenAI-style providers count them: contents, per-message overhead, reply priming. */
export function countPromptTokens(messages: ReadonlyArray<{ content: string }>): number {
  return messages.reduce((sum, m) => sum + countTokens(m.content) + TOKENS_PER_MESSAGE, TOKENS_PER_REPLY);
}
