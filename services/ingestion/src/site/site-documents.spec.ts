import { describe, expect, it } from 'vitest';
import { pageLinks, sitemapEntries } from './site-documents';

const base = new URL('https://docs.example.org/sitemap.xml');

describe('sitemapEntries', () => {
  it('reads the pages of a urlset and the sitemaps of an index, resolved and decoded', () => {
    const urlset = `<?xml version="1.0" encoding="UTF-8"?>
      <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <url><loc> https://docs.example.org/guide?a=1&amp;b=2 </loc><lastmod>2026-11-30</lastmod></url>
        <url><loc>/relative#part</loc></url>
        <url><loc>ftp://docs.example.org/file</loc></url>
        <url><loc>not a url at all</loc></url>
      </urlset>`;
    expect(sitemapEntries(urlset, base).pages.map(String)).toEqual(['https://docs.example.org/guide?a=1&b=2', 'https://docs.example.org/relative', 'https://docs.example.org/not%20a%20url%20at%20all']);
    const index = '<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://docs.example.org/a.xml</sm:loc></sm:sitemap></sm:sitemapindex>';
    expect(sitemapEntries(index, base)).toEqual({ pages: [], sitemaps: [new URL('https://docs.example.org/a.xml')] });
  });

  it('expands no entities beyond the predefined five', () => {
    const hostile = '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><urlset><url><loc>https://x.org/&b;&#1114112;</loc></url></urlset>';
    expect(sitemapEntries(hostile, base).pages.map(String)).toEqual(['https://x.org/&b;&']);
  });
});

describe('pageLinks', () => {
  const page = new URL('https://docs.example.org/guide/intro');

  it('follows a hrefs, resolved against the page or its base, without fragments or other schemes', () => {
    const html = '<a href="next">n</a><a href="/api#top">a</a><a href="mailto:x@y.org">m</a><a href="https://other.org/">o</a><a rel="nofollow" href="/ads">x</a>';
    expect(pageLinks(html, page).map(String)).toEqual(['https://docs.example.org/guide/next', 'https://docs.example.org/api', 'https://other.org/']);
    expect(pageLinks('<base href="https://docs.example.org/v2/"><a href="x">x</a>', page).map(String)).toEqual(['https://docs.example.org/v2/x']);
  });

  it('follows nothing from a page whose robots meta tag says nofollow', () => {
    expect(pageLinks('<meta name="robots" content="noindex, nofollow"><a href="/a">a</a>', page)).toEqual([]);
  });
});
