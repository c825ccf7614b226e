import { ParseFailure } from './parse-failure';

/** Elements that never have children. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** Elements an open sibling of the same group closes (`<p>a<p>b` is two paragraphs, not nested). */
const IMPLIED_CLOSE: Record<string, string> = {
  p: 'p', li: 'li', dt: 'd', dd: 'd', option: 'option', optgroup: 'optgroup', tr: 'tr', td: 'cell', th: 'cell',
  thead: 'section', tbody: 'section', tfoot: 'section', rt: 'ruby', rp: 'ruby',
};

/** Elements whose start tag closes an open paragraph. */
const CLOSES_P = new Set([
  'address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer', 'form',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'main', 'menu', 'nav', 'ol', 'pre', 'section', 'table', 'ul', 'li', 'dd', 'dt',
]);

/** Elements whose content is text up to their closing tag, never markup. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript', 'iframe', 'noembed', 'noframes', 'plaintext']);

const TAG = /<(\/?)([a-zA-Z][^\s/>]*)[^>]*?(\/?)>|<!--|<!\[CDATA\[/g;

/**
 * Refuses HTML nested deeper than `maxDepth` elements, before a parser builds a tree of it (a
 * 100,000-deep file took the HTML converter 26 s). One linear pass over the tags, following
 * how HTML parsers close elements: void elements, `/>`, implied closes of paragraphs, list
 * items and table cells, and closing tags that also close what was left open inside them.
 */
export function assertHtmlDepthWithin(html: string, maxDepth: number): void {
  const open: string[] = [];
  TAG.lastIndex = 0;
  for (let match = TAG.exec(html); match !== null; match = TAG.exec(html)) {
    if (match[0] === '<!--' || match[0] === '<![CDATA[') {
      const close = html.indexOf(match[0] === '<!--' ? '-->' : ']]>', TAG.lastIndex);
      if (close < 0) return;
      TAG.lastIndex = close + 3;
      continue;
    }
    const name = match[2]!.toLowerCase();
    if (match[1] === '/') {
      const at = open.lastIndexOf(name);
      if (at >= 0) open.length = at;
      continue;
    }
    if (CLOSES_P.has(name) && open[open.length - 1] === 'p') open.pop();
    if (VOID.has(name) || match[3] === '/') continue;
    const group = IMPLIED_CLOSE[name];
    if (group !== undefined && open.length > 0 && IMPLIED_CLOSE[open[open.length - 1]!] === group) open.pop();
    if (RAW_TEXT.has(name)) {
      const end = new RegExp(`</${name}`, 'gi');
      end.lastIndex = TAG.lastIndex;
      const close = end.exec(html);
      if (close === null) return;
      TAG.lastIndex = close.index;
      continue;
    }
    open.push(name);
    if (open.length > maxDepth) throw new ParseFailure(`the HTML nests elements more than ${maxDepth} deep`);
  }
}
