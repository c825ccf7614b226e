import { countTokens } from '@trellis/models';

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
 * Splits text into chunks of about `chunkSize` tokens made of whole sentences, with a few
 * sentences of overlap. In markdown mode a chunk never spans two sections, and carries the
 * section's heading path so retrieval and prompts keep the context a heading gives.
 */
export function splitText(text: string, options: SplitOptions): TextChunk[] {
  const sections = options.mode === 'markdown' ? markdownSections(text) : [{ heading: '', body: text }];
  const chunks: TextChunk[] = [];
  for (const section of sections) {
    const units = sentenceUnits(section.body, options.chunkSize);
    for (const text of packUnits(units, options)) {
      chunks.push({ text, heading: section.heading, tokenCount: countTokens(text) });
    }
  }
  return chunks;
}

/** Sections between markdown headings (ATX style), outside fenced code blocks. */
export function markdownSections(text: string): Section[] {
  const sections: Section[] = [];
  const path: string[] = [];
  let current: string[] = [];
  let inFence = false;
  const flush = () => {
    const body = current.join('\n').trim();
    if (body !== '') sections.push({ heading: path.filter(Boolean).join(' > '), body });
    current = [];
  };
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
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

interface Unit {
  text: string;
  tokens: number;
}

/** Sentences (paragraph breaks kept), with sentences longer than a chunk cut by words. */
function sentenceUnits(body: string, chunkSize: number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of body.split(/\n\s*\n/)) {
    const trimmed = paragraph.trim();
    if (trimmed === '') continue;
    for (const { segment } of segmenter.segment(trimmed)) {
      const sentence = segment.trim();
      if (sentence === '') continue;
      const tokens = countTokens(sentence);
      if (tokens <= chunkSize) units.push({ text: sentence, tokens });
      else units.push(...cutByWords(sentence, chunkSize));
    }
    const last = units[units.length - 1];
    if (last) last.text += '\n\n';
  }
  return units;
}

function cutByWords(sentence: string, chunkSize: number): Unit[] {
  const words = sentence.split(/\s+/);
  const pieces: Unit[] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const word of words) {
    const wordTokens = countTokens(` ${word}`);
    if (tokens + wordTokens > chunkSize && current.length > 0) {
      pieces.push({ text: current.join(' '), tokens });
      current = [];
      tokens = 0;
    }
    current.push(word);
    tokens += wordTokens;
  }
  if (current.length > 0) pieces.push({ text: current.join(' '), tokens });
  return pieces;
}

function packUnits(units: Unit[], options: SplitOptions): string[] {
  const chunks: string[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  const emit = () => chunks.push(joinUnits(current));
  for (const unit of units) {
    if (tokens + unit.tokens > options.chunkSize && current.length > 0) {
      emit();
      const carried: Unit[] = [];
      let carriedTokens = 0;
      for (let i = current.length - 1; i >= 0; i--) {
        const u = current[i]!;
        if (carriedTokens + u.tokens > options.overlap || carriedTokens + u.tokens + unit.tokens > options.chunkSize) break;
        carried.unshift(u);
        carriedTokens += u.tokens;
      }
      current = carried;
      tokens = carriedTokens;
    }
    current.push(unit);
    tokens += unit.tokens;
  }
  if (current.length > 0) emit();
  return chunks;
}

function joinUnits(units: Unit[]): string {
  return units
    .map((u) => u.text)
    .join(' ')
    .replace(/\n\n /g, '\n\n')
    .trim();
}
