import { fencedRuns } from './markdown-fences';

/** Elements whose tags end a line of text (their content is a block of its own). */
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'div', 'dl', 'dt', 'figcaption', 'figure',
  'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section',
  'summary', 'table', 'tbody', 'tfoot', 'thead', 'tr', 'ul',
]);

/** Elements whose tags stand between words. */
const INLINE = new Set([
  'a', 'abbr', 'b', 'button', 'cite', 'code', 'col', 'colgroup', 'del', 'em', 'font', 'i', 'iframe', 'img', 'input', 'ins',
  'kbd', 'label', 'mark', 'picture', 'q', 's', 'small', 'source', 'span', 'strong', 'sub', 'sup', 'svg', 'td', 'th', 'time',
  'u', 'var', 'video', 'wbr',
]);

/** Elements whose content is not text a reader sees. */
const HIDDEN = new Set(['script', 'style', 'template']);

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/**
 * One pattern for everything the scan stops at: an inline code span (kept as written), a
 * comment opening, a tag, a character reference. Each alternative stops at the next backtick,
 * angle bracket or line end and none backtracks into a backreference, so the scan is linear on
 * any input (a code span is any backtick run to the next one on its line, as in mdx-text).
 */
const TOKEN = /(`+[^`\n]*`+)|<!--|<(\/?)([A-Za-z][\w-]*)(?:\s[^<>]*)?\/?>|&(#\d{1,7}|#x[0-9a-fA-F]{1,6}|[a-z]{2,6});/g;

/**
 * Markdown with the HTML inside it reduced to its text: tags of HTML elements and of custom
 * elements (`<app-banner>`) go, block elements leaving a line break (a space inside a markdown
 * table row, which must stay one line) and table cells a space;
 * comments, scripts and styles go with their content; character references are decoded.
 * Fenced code blocks and inline code spans are kept exactly as written, and so is anything
 * that only looks like a tag (`Promise<void>` in prose).
 */
export function markdownWithoutHtml(markdown: string): string {
  return fencedRuns(markdown)
    .map((run) => (run.code ? run.text : proseWithoutHtml(run.text)))
    .join('\n');
}

function proseWithoutHtml(text: string): string {
  let out = '';
  let from = 0;
  let hiddenUntil: string | undefined;
  let commentsClosable = true;
  const rows = pipeRowSpans(text);
  let row = 0;
  // Matches come in order: one pointer walks the rows along with them.
  const inRow = (at: number) => {
    while (row < rows.length && rows[row]!.end < at) row++;
    return row < rows.length && rows[row]!.start <= at;
  };
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
    const [token, code, closing, rawName, reference] = match;
    const name = rawName?.toLowerCase();
    if (hiddenUntil !== undefined) {
      // Inside <script> or <style>: only its closing tag counts.
      if (closing === '/' && name === hiddenUntil) {
        hiddenUntil = undefined;
        from = TOKEN.lastIndex;
      }
      continue;
    }
    out += text.slice(from, match.index);
    from = TOKEN.lastIndex;
    if (code !== undefined) out += token;
    else if (token === '<!--') {
      // An unclosed comment hides nothing: only its opening goes. Once no closing is left,
      // later openings do not search again (what keeps many of them linear).
      const end = commentsClosable ? text.indexOf('-->', TOKEN.lastIndex) : -1;
      if (end >= 0) from = TOKEN.lastIndex = end + 3;
      else commentsClosable = false;
    } else if (reference !== undefined) out += decodeReference(reference) ?? token;
    else if (name !== undefined && HIDDEN.has(name)) {
      if (closing !== '/' && !token.endsWith('/>')) hiddenUntil = name;
    } else if (name !== undefined && BLOCK.has(name)) out += inRow(match.index) ? ' ' : '\n';
    else if (name !== undefined && (INLINE.has(name) || name.includes('-'))) out += name === 'td' || name === 'th' ? ' ' : '';
    else out += token;
  }
  if (hiddenUntil === undefined) out += text.slice(from);
  return out
    .split('\n')
    .map((line) => (line.trim() === '' ? '' : line.replace(/[ \t]+$/, '')))
    .join('\n');
}

/** Where the lines of markdown table rows (`| a | b |`) are: a block tag there must not end the row. */
function pipeRowSpans(text: string): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let start = 0;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.length > 1 && trimmed.startsWith('|') && trimmed.endsWith('|')) spans.push({ start, end: start + line.length });
    start += line.length + 1;
  }
  return spans;
}

function decodeReference(reference: string): string | undefined {
  if (reference[0] !== '#') return ENTITIES[reference];
  const code = reference[1] === 'x' || reference[1] === 'X' ? parseInt(reference.slice(2), 16) : parseInt(reference.slice(1), 10);
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}
