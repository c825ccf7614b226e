import { closesFence, fenceOpened } from '@trellis/contracts';

/**
 * The markdown an MDX file holds: its ES module lines (`import`, `export`), JSX comments and
 * expressions (`{...}`) and JSX tags go; the text between tags and every markdown construct
 * stay. Fenced code blocks and inline code spans are kept exactly as written, JSX included,
 * since there it is content. Linear in the input; tags are recognised by shape, not parsed.
 */
export function mdxToMarkdown(source: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of source.split('\n')) {
    if (fence !== undefined) {
      out.push(line);
      if (closesFence(line, fence)) fence = undefined;
      continue;
    }
    fence = fenceOpened(line);
    if (fence !== undefined) {
      out.push(line);
      continue;
    }
    if (/^(import|export)\s/.test(line)) continue;
    // Inline code spans are content: only the text around them loses its JSX.
    out.push(line.split(/(`+[^`]*`+)/).map((part, i) => (i % 2 === 1 ? part : withoutJsx(part))).join('').replace(/[ \t]+$/, ''));
  }
  return out.join('\n');
}

/**
 * JSX comments and expressions, then tags (components, fragments, lower-case elements), from
 * one line. Every pattern fails fast at the next brace or angle bracket, so a hostile line
 * costs linear time.
 */
function withoutJsx(line: string): string {
  return withoutComments(line)
    .replace(/\{[^{}]*\}/g, '')
    .replace(/<\/?>/g, '')
    .replace(/<\/?[A-Za-z][\w.:-]*(?:\s[^<>]*)?\/?>/g, '');
}

/** `{/* ... *\/}` removed by scanning, not by a backtracking pattern. */
function withoutComments(line: string): string {
  let out = '';
  let from = 0;
  for (let start = line.indexOf('{/*'); start !== -1; start = line.indexOf('{/*', from)) {
    const end = line.indexOf('*/}', start + 3);
    if (end === -1) break;
    out += line.slice(from, start);
    from = end + 3;
  }
  return out + line.slice(from);
}
