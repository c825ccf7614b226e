import { describe, expect, it } from 'vitest';
import type { DocumentRecord } from '@trellis/storage';
import { HttpStatusError } from '../url-fetch/url-fetcher';
import type { FetchedDocument } from '../url-fetch/url-fetcher';
import { crawlSite } from './site-crawler';
import type { PageResult, SiteCrawl, SitePort } from './site-crawler';

const origin = 'https://docs.example.org';

/** A site as a map of path → status or HTML; ingesting records the page and never fails. */
function sitePort(site: Record<string, number | string>): SitePort & { ingested: string[] } {
  const ingested: string[] = [];
  return {
    ingested,
    checkReachable: async () => undefined,
    cachedCopy: async () => null,
    fetch: async (url) => {
      const page = site[url.pathname];
      if (page === undefined || typeof page === 'number') throw new HttpStatusError(page ?? 404, url);
      return { bytes: Buffer.from(page), mimeType: 'text/html', url, etag: '', lastModified: '' } satisfies FetchedDocument;
    },
    ingest: async (_page, requested) => {
      ingested.push(requested.pathname);
      return { document: { id: requested.pathname, version: 1 } as DocumentRecord, unchanged: false };
    },
  };
}

const crawl = (start: string, maxPages = 10): SiteCrawl => ({ mode: 'crawl', start: new URL(start, origin), maxPages, sameOrigin: true, delayMs: 0, concurrency: 3, userAgent: 'trellis-url-fetch' });

async function all(pages: AsyncGenerator<PageResult>): Promise<PageResult[]> {
  const results: PageResult[] = [];
  for await (const page of pages) results.push(page);
  return results;
}

describe('crawlSite', () => {
  it('fetches nothing but robots.txt from a site whose robots.txt answers 5xx', async () => {
    const port = sitePort({ '/robots.txt': 503, '/': '<a href="/a">a</a>' });
    const results = await all(crawlSite(crawl('/'), port));
    expect(results.map((r) => r.outcome)).toEqual(['disallowed']);
    expect(port.ingested).toEqual([]);
  });

  it('visits each page once however many pages link to it, and stops at max_pages', async () => {
    const port = sitePort({ '/': '<a href="/a">a</a><a href="/b">b</a>', '/a': '<a href="/b">b</a><a href="/">home</a>', '/b': '<a href="/a#x">a</a><a href="/c">c</a>', '/c': 'end' });
    const results = await all(crawlSite(crawl('/'), port));
    expect(port.ingested.sort()).toEqual(['/', '/a', '/b', '/c']);
    expect(results.map((r) => r.done)).toEqual([1, 2, 3, 4]);
    const capped = sitePort({ '/': '<a href="/a">a</a><a href="/b">b</a>', '/a': 'a', '/b': 'b' });
    expect((await all(crawlSite(crawl('/', 2), capped))).length).toBe(2);
  });
});
