import { describe, expect, it } from 'vitest';
import { documentTitle } from './document-title';

describe('documentTitle', () => {
  it('takes metadata title first, whatever the format says', () => {
    expect(documentTitle({ metadata: { title: ' The  Jetsons ' }, text: '# Cartoons', filename: 'a.md' })).toBe('The Jetsons');
  });

  it('takes a markdown front-matter title, else its first level-1 heading', () => {
    expect(documentTitle({ metadata: {}, text: '---\ntitle: "Rate limiting"\nsidebar: 2\n---\n# Other', filename: 'a.md' })).toBe('Rate limiting');
    expect(documentTitle({ metadata: {}, text: 'intro\n## Sub\n# Guards #\ntext', filename: 'a.md' })).toBe('Guards');
  });

  it('takes the HTML <title>, entities decoded, before headings of the parsed text', () => {
    expect(documentTitle({ metadata: {}, text: '# Heading', filename: 'p.html', html: '<html><head><title>Tom &amp; Jerry</title></head>' })).toBe('Tom & Jerry');
  });

  it('falls back to the file name without its extension', () => {
    expect(documentTitle({ metadata: {}, text: 'plain text', filename: 'docs/release-notes.v2.txt' })).toBe('release-notes.v2');
    expect(documentTitle({ metadata: {}, text: 'x', filename: 'README' })).toBe('README');
  });
});
