import { closesFence, fenceOpened } from '@trellis/contracts';
/**
 * A markdown section body as the blocks chunking must respect: fenced code blocks and tables
 * (kept whole, or cut only between their lines) and the prose between them (cut by sentences).
 * One pass over the lines; every test on a line is linear in its length.
 */
export type MarkdownBlock =
  | { readonly kind: 'prose'; readonly text: string }
  /**
   * Lines framed by `head` and `foot`, which every piece of the block repeats; `source` is the
   * block as written (an unclosed fence has no foot there).
   */
  | { readonly kind: 'framed'; readonly head: readonly string[]; readonly lines: readonly string[]; readonly foot: readonly string[]; readonly source: string };


/** `| a | b |` rows need a delimiter row under the header: `| --- | :-: |`. */
function isDelimiterRow(line: string): boolean {
  return line.includes('|') && line.includes('-') && /^[\s|:-]+$/.test(line);
}

function isPipeRow(line: string): boolean {
  const trimmed = line.trim();
  return trimmed.length > 1 && trimmed.startsWith('|') && trimmed.endsWith('|');
}

export function markdownBlocks(body: string): MarkdownBlock[] {
  const lines = body.split('\n');
  const blocks: MarkdownBlock[] = [];
  let prose: string[] = [];
  const flushProse = () => {
    const text = prose.join('\n').trim();
    if (text !== '') blocks.push({ kind: 'prose', text });
    prose = [];
  };
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    const marker = fenceOpened(line);
    if (marker !== undefined) {
      flushProse();
      let end = i + 1;
      while (end < lines.length && !closesFence(lines[end]!, marker)) end++;
      // An unclosed fence runs to the end of the section; its pieces are closed with its marker.
      const foot = end < lines.length ? lines[end]! : marker;
      const source = lines.slice(i, end + 1).join('\n');
      blocks.push({ kind: 'framed', head: [line], lines: lines.slice(i + 1, end), foot: [foot], source });
      i = end + 1;
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && isDelimiterRow(lines[i + 1]!)) {
      flushProse();
      let end = i + 2;
      while (end < lines.length && lines[end]!.trim() !== '' && lines[end]!.includes('|')) end++;
      blocks.push({ kind: 'framed', head: [line, lines[i + 1]!], lines: lines.slice(i + 2, end), foot: [], source: lines.slice(i, end).join('\n') });
      i = end;
      continue;
    }
    if (isPipeRow(line)) {
      // Rows without a delimiter row are no GFM table, but still rows a chunk must not cut.
      flushProse();
      let end = i + 1;
      while (end < lines.length && isPipeRow(lines[end]!)) end++;
      blocks.push({ kind: 'framed', head: [], lines: lines.slice(i, end), foot: [], source: lines.slice(i, end).join('\n') });
      i = end;
      continue;
    }
    prose.push(line);
    i++;
  }
  flushProse();
  return blocks;
}

/** The text a framed block stands for in a chunk. */
export function framedText(head: readonly string[], lines: readonly string[], foot: readonly string[]): string {
  return [...head, ...lines, ...foot].join('\n');
}
