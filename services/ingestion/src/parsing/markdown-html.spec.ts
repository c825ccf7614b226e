import { describe, expect, it } from 'vitest';
import { parseDocument } from './document-parser';
import { markdownWithoutHtml } from './markdown-html';

describe('HTML inside markdown reduced to its text', () => {
  it('drops tags, comments and banners, leaves block text on lines of its own and table cells apart', () => {
    const md = [
      'Files of a new project:',
      '',
      '<div class="file-tree">',
      '  <div class="item">src</div>',
      '  <div class="children"><div class="item">main.ts</div></div>',
      '</div>',
      '<!-- internal note',
      'spanning lines -->',
      '<app-banner-courses></app-banner-courses>',
      '<figure><img src="/assets/cats.png" alt="cats" /></figure>',
      '<table><tr><td>ttl</td><td>time&nbsp;to live &amp; more</td></tr></table>',
      'See <a href="/x">the guide</a>, then <strong>restart</strong>.',
    ].join('\n');
    const out = markdownWithoutHtml(md);
    expect(out).not.toMatch(/<|-->|&nbsp;|&amp;/);
    expect(out.split('\n').filter((l) => l !== '')).toEqual([
      'Files of a new project:',
      'src',
      'main.ts',
      ' ttl  time to live & more',
      'See the guide, then restart.',
    ]);
  });

  it('keeps fenced code, inline code and tag-like text in prose exactly as written', () => {
    const md = ['Returns `Promise<void>` or a Promise<string> here.', '', '```html', '<div class="thumbnail">', '  <img src="a.png">', '</div>', '```', '', '<p>after</p>'].join('\n');
    expect(markdownWithoutHtml(md)).toBe(
      ['Returns `Promise<void>` or a Promise<string> here.', '', '```html', '<div class="thumbnail">', '  <img src="a.png">', '</div>', '```', '', '', 'after', ''].join('\n'),
    );
  });

  it('keeps a markdown table row on one line when a cell holds block tags', () => {
    const md = ['| option | meaning |', '| --- | --- |', '| `ttl` | time to live<br>in seconds<p>see below</p> |', '<div>after</div>'].join('\n');
    expect(markdownWithoutHtml(md).split('\n').filter((l) => l !== '')).toEqual(['| option | meaning |', '| --- | --- |', '| `ttl` | time to live in seconds see below  |', 'after']);
  });

  it('hides the content of script and style, and keeps the text after an unclosed comment', () => {
    expect(markdownWithoutHtml('a <script>alert("x")</script> b <style>p{}</style> c')).toBe('a  b  c');
    expect(markdownWithoutHtml('text <!-- never closed\nmore text')).toBe('text  never closed\nmore text');
  });

  it('is applied to .md and .mdx uploads, not to plain text', async () => {
    const md = await parseDocument(Buffer.from('# Title\n\n<div class="hint">Use <code>forRoot()</code>.</div>\n'), 'page.md', '');
    expect(md.text).toBe('# Title\n\nUse forRoot().');
    const mdx = await parseDocument(Buffer.from('# Title\n\n<!-- hidden -->\nText &amp; more.\n'), 'page.mdx', '');
    expect(mdx.text).toBe('# Title\n\nText & more.');
    const txt = await parseDocument(Buffer.from('<div>kept as written</div>'), 'page.txt', '');
    expect(txt.text).toBe('<div>kept as written</div>');
  });

  it('reduces hostile markup in linear time: deep nesting, 100,000 backticks, unclosed tags and comments', () => {
    const deep = `${'<div><span>'.repeat(100_000)}deep${'</span></div>'.repeat(100_000)}`;
    expect(markdownWithoutHtml(deep).replace(/\n/g, '')).toBe('deep');
    const ticks = '`'.repeat(100_000);
    expect(markdownWithoutHtml(`${ticks} <b>x</b>`)).toBe(`${ticks} <b>x</b>`);
    expect(markdownWithoutHtml(`a\`${' <b>x</b>'.repeat(1000)}`)).toBe(`a\`${' x'.repeat(1000)}`);
    const unclosed = `${'<div class="a'.repeat(50_000)}`;
    expect(markdownWithoutHtml(unclosed)).toBe(unclosed);
    const comments = '<!--'.repeat(100_000);
    expect(markdownWithoutHtml(comments)).toBe('');
  });
});
