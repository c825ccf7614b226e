import { describe, expect, it } from 'vitest';
import { parseRobots } from './robots-rules';

const url = (path: string) => new URL(path, 'https://docs.example.org');

describe('parseRobots', () => {
  const text = [
    '# comments and unknown lines are ignored',
    'Sitemap: https://docs.example.org/sitemap.xml',
    'User-agent: *',
    'Disallow: /private/',
    'Allow: /private/open',
    'Disallow: /*.pdf$',
    'Crawl-delay: 2',
    '',
    'User-agent: other-bot',
    'User-agent: trellis-url-fetch',
    'Disallow: /drafts',
    'Crawl-delay: 0.5',
  ].join('\n');

  it('obeys the group naming its product token, longest rule winning, allow on a tie', () => {
    const rules = parseRobots(text, 'trellis-url-fetch');
    expect(rules.allows(url('/drafts/one'))).toBe(false);
    // The * group is not ours once a group names us.
    expect(rules.allows(url('/private/x'))).toBe(true);
    expect(rules.crawlDelaySeconds).toBe(0.5);
  });

  it('falls back to the * group, with wildcards and end anchors', () => {
    const rules = parseRobots(text, 'someone-else');
    expect(rules.allows(url('/private/x'))).toBe(false);
    expect(rules.allows(url('/private/open/page'))).toBe(true);
    expect(rules.allows(url('/guide/manual.pdf'))).toBe(false);
    expect(rules.allows(url('/guide/manual.pdf?download=1'))).toBe(true);
    expect(rules.allows(url('/guide/'))).toBe(true);
    expect(rules.crawlDelaySeconds).toBe(2);
  });

  it('allows everything without rules, and with an empty disallow', () => {
    expect(parseRobots('', 'trellis-url-fetch').allows(url('/anything'))).toBe(true);
    expect(parseRobots('User-agent: *\nDisallow:\n', 'trellis-url-fetch').allows(url('/anything'))).toBe(true);
    expect(parseRobots('User-agent: *\nDisallow: /\n', 'trellis-url-fetch').allows(url('/anything'))).toBe(false);
  });
});
