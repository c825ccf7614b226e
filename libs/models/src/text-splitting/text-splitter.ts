import { ErrorCode, TrellisError, closesFence, fenceOpened } from '@trellis/contracts';
import { countTokens, countTokensUpTo } from '../token-counter';
import { yieldToEventLoop } from '../yield-to-event-loop';
import { framedUnits } from './framed-units';
import { markdownBlocks } from './markdown-blocks';
import { cutByWords } from './oversize-cuts';
import type { Unit } from './oversize-cuts';

export interface SplitOptions {
  /** Target chunk size in tokens. */
  readonly chunkSize: number;
  /** Tokens of trailing sentences repeated at the start of the next chunk. */
  readonly overlap: number;
  /** 'markdown' splits at headings first and records the heading path of each chunk. */
  readonly mode: 'sentence' | 'markdown';
}

export interface TextChunk {
  readonly text: string;
  /** Heading path ("Install > Linux") in markdown mode, '' otherwise. */
  readonly heading: string;
  readonly tokenCount: number;
}

interface Section {
  heading: string;
  body: string;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Splits text into chunks of at most `chunkSize` tokens made of whole sentences, with a few
 * sentences of overlap; a sentence longer than a chunk is cut between words, and a word longer
 * than a chunk inside it. Time is linear in the length of `text`: every stretch of text goes
 * through the token counter a bounded number of times. In markdown mode a chunk never spans two
 * sections, and carries the section's heading path so retrieval and prompts keep the context a
 * heading gives.
 */
export function splitText(text: string, options: SplitOptions): TextChunk[] {
  const steps = splitSteps(text, options);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The same split, run in slices that give the event loop back every few milliseconds, and
 * abandoned with RESOURCE_EXHAUSTED once it has taken `timeoutMs` (a document that fails so
 * is marked failed, not retried).
 */
export async function splitTextWithin(text: string, options: SplitOptions, timeoutMs: number): Promise<TextChunk[]> {
  const started = Date.now();
  let sliceStarted = started;
  const steps = splitSteps(text, options);
  for (let step = steps.next(), n = 1; ; step = steps.next(), n++) {
    if (step.done) return step.value;
    if (n % 64 !== 0) continue;
    const now = Date.now();
    if (now - started > timeoutMs) {
      throw new TrellisError(ErrorCode.ResourceExhausted, `splitting the document into chunks took longer than ${timeoutMs} ms (TRELLIS_PARSE_TIMEOUT_MS)`);
    }
    if (now - sliceStarted >= SLICE_MS) {
      await yieldToEventLoop();
      sliceStarted = Date.now();
    }
  }
}

/** Longest stretch the split holds the event loop for, when run in slices. */
const SLICE_MS = 20;

/** The split as steps: it yields after every sentence, word, window and chunk it handles. */
function* splitSteps(text: string, options: SplitOptions): Generator<void, TextChunk[]> {
  const sections = options.mode === 'markdown' ? markdownSections(text) : [{ heading: '', body: text }];
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    const units = options.mode === 'markdown' ? yield* markdownUnits(section.body, options.chunkSize) : yield* sentenceUnits(section.body, options.chunkSize);
    for (const chunk of yield* packUnits(units, options)) chunks.push({ text: chunk.text, heading: section.heading, tokenCount: chunk.tokens });
  }
  return chunks;
}

/** Sections between markdown headings (ATX style), outside fenced code blocks. */
export function markdownSections(text: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let current: string[] = [];
  let fence: string | undefined;
  const flush = () => {
    const body = current.join('\n').trim();
    if (body !== '') sections.push({ heading: path.filter(Boolean).join(' > '), body });
    current = [];
  };
  for (const line of text.split('\n')) {
    if (fence === undefined) fence = fenceOpened(line);
    else if (closesFence(line, fence)) fence = undefined;
    const heading = fence !== undefined ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      path.length = level;
      path[level - 1] = heading[2]!;
      continue;
    }
    current.push(line);
  }
  flush();
  return sections;
}

/**
 * A markdown section's units: prose by sentences, and each fenced code block or table whole,
 * or in framed pieces of whole lines when it is larger than a chunk.
 */
function* markdownUnits(body: string, chunkSize: number): Generator<void, Unit[]> {
  const units: Unit[] = [];
  for (const block of markdownBlocks(body)) {
    const framed = block.kind === 'framed' ? yield* framedUnits(block.head, block.lines, block.foot, chunkSize) : undefined;
    const pieces = framed ?? (yield* sentenceUnits(block.kind === 'prose' ? block.text : block.source, chunkSize));
    for (const piece of pieces) units.push(piece);
  }
  return units;
}

/** A line that starts a list item ("- a", "* b", "1. c"): the item ends where the next starts. */
const LIST_ITEM = /\n(?=[ \t]*(?:[*+-]|\d{1,3}[.)])[ \t])/;

/**
 * Sentences (paragraph breaks and list items' line breaks kept), with sentences longer than a
 * chunk cut by words. A list item is a unit boundary of its own: items seldom end with a full
 * stop, and run together they would read as one sentence.
 */
function* sentenceUnits(body: string, chunkSize: number): Generator<void, Unit[]> {
  const units: Unit[] = [];
  const endWith = (suffix: string) => {
    const last = units[units.length - 1];
    if (last && !last.text.endsWith('\n\n')) last.text += suffix;
  };
  for (const paragraph of body.split(/\n\s*\n/)) {
    if (paragraph.trim() === '') continue;
    for (const item of paragraph.split(LIST_ITEM)) {
      const trimmed = item.trim();
      if (trimmed === '') continue;
      for (const { segment } of segmenter.segment(trimmed)) {
        const sentence = segment.trim();
        if (sentence === '') continue;
        const tokens = countTokensUpTo(sentence, chunkSize);
        if (tokens <= chunkSize) units.push({ text: sentence, tokens });
        else units.push(...(yield* cutByWords(sentence, chunkSize)));
        yield;
      }
      endWith('\n');
    }
    endWith('\n');
  }
  return units;
}

/**
 * Packs units into chunks. Units' counts add up to about a chunk's; the chunk's own count is
 * the one that must fit (tokens can merge or split where units meet), so a chunk over budget
 * sheds its overlap first, then its last units.
 */
function* packUnits(units: Unit[], options: SplitOptions): Generator<void, Unit[]> {
  const chunks: Unit[] = [];
  let carried = 0;
  let next = 0;
  while (next < units.length) {
    let start = next - carried;
    let end = next;
    let estimate = 0;
    for (let i = start; i < next; i++) estimate += units[i]!.tokens;
    while (end < units.length && (end === next || estimate + units[end]!.tokens <= options.chunkSize)) {
      estimate += units[end]!.tokens;
      end++;
    }
    let text = joinUnits(units.slice(start, end));
    let tokens = countTokens(text);
    while (tokens > options.chunkSize && end - start > 1) {
      if (start < next) start++;
      else end--;
      text = joinUnits(units.slice(start, end));
      tokens = countTokens(text);
    }
    chunks.push({ text, tokens });
    yield;
    next = end;
    carried = end < units.length ? overlapUnits(units, start, end, options) : 0;
  }
  return chunks;
}

/** How many trailing units of [start, end) to repeat before `units[end]`. */
function overlapUnits(units: Unit[], start: number, end: number, options: SplitOptions): number {
  const following = units[end]!.tokens;
  let carried = 0;
  let tokens = 0;
  for (let i = end - 1; i >= start; i--) {
    const u = units[i]!;
    if (tokens + u.tokens > options.overlap || tokens + u.tokens + following > options.chunkSize) break;
    carried++;
    tokens += u.tokens;
  }
  return carried;
}

/** Sentences joined by a space, except after a list item's, paragraph's or block's end (its own line break). */
function joinUnits(units: Unit[]): string {
  let text = '';
  for (const u of units) text += text === '' || text.endsWith('\n') ? u.text : ` ${u.text}`;
  return text.trim();
}
