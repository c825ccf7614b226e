import { closesFence, fenceOpened } from '@trellis/contracts';
/** A piece of a chunk an extractive answer may quote: a sentence, or a fenced code block whole. */
export interface AnswerPassage {
  readonly text: string;
  readonly code: boolean;
}

const segmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * Past this length a sentence ends at the next boundary even inside brackets or inline code,
 * so an unclosed bracket cannot make the rest of a paragraph one "sentence".
 */
const LONGEST_SENTENCE = 1_000;

/**
 * A chunk's text as quotable passages: each fenced code block whole, as written, each table
 * row as its cells ("`main.ts`: The entry file"), and the prose around them by sentences. Unicode sentence boundaries end a sentence at `?` and `!`,
 * so `process.env.PORT ?? 3000` or a `?.` chain would be cut; a boundary is kept only outside
 * inline code, outside open brackets, and not after `??` or `?.`.
 */
export function answerPassages(text: string): AnswerPassage[] {
  const passages: AnswerPassage[] = [];
  let prose: string[] = [];
  const flushProse = () => {
    for (const paragraph of prose.join('\n').split(/\n\s*\n/)) passages.push(...sentences(paragraph.replace(/\s+/g, ' ').trim()));
    prose = [];
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const row = tableRow(lines[i]!);
    if (row !== undefined) {
      flushProse();
      if (row !== '') passages.push({ text: row, code: false });
      continue;
    }
    const marker = fenceOpened(lines[i]!);
    if (marker === undefined) {
      prose.push(lines[i]!);
      continue;
    }
    flushProse();
    let end = i + 1;
    while (end < lines.length && !closesFence(lines[end]!, marker)) end++;
    const block = lines.slice(i, end + 1);
    // A chunk may end inside a block: quote it closed.
    if (end >= lines.length) block.push(marker);
    passages.push({ text: block.join('\n'), code: true });
    i = end;
  }
  flushProse();
  return passages;
}

function sentences(paragraph: string): AnswerPassage[] {
  const result: AnswerPassage[] = [];
  let current = '';
  let ticks = 0;
  let depth = 0;
  for (const { segment } of segmenter.segment(paragraph)) {
    current += segment;
    for (const ch of segment) {
      if (ch === '`') ticks++;
      else if (ticks % 2 === 0 && (ch === '(' || ch === '[' || ch === '{')) depth++;
      else if (ticks % 2 === 0 && (ch === ')' || ch === ']' || ch === '}')) depth = Math.max(0, depth - 1);
    }
    const trimmed = current.trimEnd();
    const continues = ticks % 2 === 1 || depth > 0 || trimmed.endsWith('??') || trimmed.endsWith('?.');
    if (continues && current.length < LONGEST_SENTENCE) continue;
    if (trimmed.trim() !== '') result.push({ text: trimmed.trim(), code: false });
    current = '';
    ticks = 0;
    depth = 0;
  }
  if (current.trim() !== '') result.push({ text: current.trim(), code: false });
  return result;
}

/** A table row's non-empty cells joined by ": " ('' for a delimiter row), or undefined for other lines. */
function tableRow(line: string): string | undefined {
  const trimmed = line.trim();
  if (trimmed.length < 2 || !trimmed.startsWith('|') || !trimmed.endsWith('|')) return undefined;
  if (/^[\s|:-]+$/.test(trimmed)) return '';
  return trimmed
    .slice(1, -1)
    .split('|')
    .map((cell) => cell.trim())
    .filter((cell) => cell !== '')
    .join(': ');
}

