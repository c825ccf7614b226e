import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { grpcCode, trellis, waitUntilIndexed } from './helpers';

/**
 * A small documentation site on loopback (allowed for this server with
 * TRELLIS_URL_FETCH_ALLOW): robots.txt, a sitemap index, HTML and markdown pages with ETags,
 * a page robots.txt disallows, a missing page, and links to assets and to another origin.
 */
class TestSite {
  readonly requests: Array<{ path: string; at: number; conditional: boolean }> = [];
  readonly pages = new Map<string, { type: string; body: string }>();
  private server!: Server;
  origin = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const conditional = req.headers['if-none-match'] !== undefined;
      this.requests.push({ path, at: Date.now(), conditional });
      const page = this.pages.get(path);
      if (page === undefined) {
        res.writeHead(404).end('not found');
        return;
      }
      const etag = `"${createHash('sha1').update(page.body).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag }).end();
        return;
      }
      res.writeHead(200, { 'content-type': page.type, etag }).end(page.body);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.origin = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    const html = (title: string, text: string, links: string[] = []) => ({
      type: 'text/html; charset=utf-8',
      body: `<html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p>${links.map((l) => `<a href="${l}">${l}</a>`).join(' ')}</body></html>`,
    });
    const otherOrigin = this.origin.replace('127.0.0.1', 'localhost');
    this.pages.set('/robots.txt', { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n' });
    this.pages.set('/sitemap.xml', { type: 'application/xml', body: `<sitemapindex><sitemap><loc>${this.origin}/sitemap-docs.xml</loc></sitemap></sitemapindex>` });
    this.pages.set('/sitemap-docs.xml', {
      type: 'application/xml',
      body: `<urlset>${['/docs/limits.html', '/docs/guards.html', '/docs/pipes.md', '/private/secret.html', '/docs/missing.html'].map((p) => `<url><loc>${this.origin}${p}</loc></url>`).join('')}</urlset>`,
    });
    this.pages.set('/docs/limits.html', html('Rate limiting', 'The ThrottlerModule limits how many requests a client can make per minute.', ['guards.html', '/docs/pipes.md#usage', '/private/secret.html', '/logo.png', `${otherOrigin}/elsewhere.html`]));
    this.pages.set('/docs/guards.html', html('Guards', 'A guard decides whether a request reaches its route handler.', ['limits.html']));
    this.pages.set('/docs/pipes.md', { type: 'text/markdown', body: '# Pipes\n\nA pipe transforms or validates the arguments of a route handler.\n' });
    this.pages.set('/private/secret.html', html('Secret', 'This page must never be fetched.'));
    this.pages.set('/logo.png', { type: 'image/png', body: 'png' });
    this.pages.set('/elsewhere.html', html('Elsewhere', 'A page of another origin.'));
  }

  fetched(path: string): number {
    return this.requests.filter((r) => r.path === path).length;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}

async function collect(pages: AsyncGenerator<v1.SitePage>): Promise<Map<string, v1.SitePage>> {
  const byPath = new Map<string, v1.SitePage>();
  for await (const page of pages) byPath.set(new URL(page.url).pathname, page);
  return byPath;
}

const outcomes = (pages: Map<string, v1.SitePage>) => Object.fromEntries([...pages].map(([path, page]) => [path, page.outcome]));

describe('adding a web site (AddSite, trellis ingest --sitemap / --crawl)', () => {
  const site = new TestSite();
  let server: StandaloneProcess;
  let client: TrellisClient;

  beforeAll(async () => {
    await site.start();
    server = await startStandaloneProcess({ env: { TRELLIS_URL_FETCH_ALLOW: '127.0.0.1,localhost', TRELLIS_EMBEDDINGS: 'hash' } });
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: 'docs' });
    await client.createKnowledgeBase({ name: 'crawled' });
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.stop();
    await site.stop();
  });

  it('adds every page of a sitemap index, obeying robots.txt, one result per page', async () => {
    const pages = await collect(client.addSite({ knowledgeBase: 'docs', sitemapUrl: `${site.origin}/sitemap.xml`, delayMs: 0 }));
    expect(outcomes(pages)).toEqual({
      '/docs/limits.html': 'added',
      '/docs/guards.html': 'added',
      '/docs/pipes.md': 'added',
      '/private/secret.html': 'disallowed',
      '/docs/missing.html': 'failed',
    });
    expect(pages.get('/docs/missing.html')!.error).toMatch(/HTTP 404/);
    expect(pages.get('/private/secret.html')!.error).toMatch(/robots\.txt .* disallows \/private\/secret\.html/);
    expect(site.fetched('/private/secret.html')).toBe(0);
    expect(site.fetched('/robots.txt')).toBe(1);
    expect(Math.max(...[...pages.values()].map((p) => p.done))).toBe(5);
    const ids = [...pages.values()].filter((p) => p.outcome === 'added').map((p) => p.document!.id);
    await waitUntilIndexed(client, 'docs', ids);
    const hits = await client.retrieve({ knowledgeBase: 'docs', query: 'How many requests can a client make per minute?', topK: 1 });
    expect(hits.chunks[0]?.sourceUri).toBe(`${site.origin}/docs/limits.html`);
  }, 120_000);

  it('fetches held pages conditionally the next time and indexes only the page that changed', async () => {
    site.pages.set('/docs/pipes.md', { type: 'text/markdown', body: '# Pipes\n\nA pipe transforms or validates arguments; ParseIntPipe turns a string into a number.\n' });
    const before = site.requests.length;
    const pages = await collect(client.addSite({ knowledgeBase: 'docs', sitemapUrl: `${site.origin}/sitemap.xml`, delayMs: 0 }));
    expect(outcomes(pages)).toMatchObject({ '/docs/limits.html': 'not_modified', '/docs/guards.html': 'not_modified', '/docs/pipes.md': 'updated' });
    expect(pages.get('/docs/pipes.md')!.document!.version).toBe(2);
    const again = site.requests.slice(before).filter((r) => r.path.startsWith('/docs/') && r.path !== '/docs/missing.html');
    expect(again.every((r) => r.conditional)).toBe(true);
  }, 120_000);

  it('crawls links from a start page within its origin, skipping assets, fragments and disallowed pages', async () => {
    const pages = await collect(client.addSite({ knowledgeBase: 'crawled', crawlUrl: `${site.origin}/docs/limits.html`, maxPages: 10, delayMs: 0 }));
    expect(outcomes(pages)).toEqual({
      '/docs/limits.html': 'added',
      '/docs/guards.html': 'added',
      '/docs/pipes.md': 'added',
      '/private/secret.html': 'disallowed',
    });
    expect(site.fetched('/logo.png')).toBe(0);
    expect(site.fetched('/elsewhere.html')).toBe(0);
    // Another origin is followed only when asked, and max_pages bounds the crawl.
    const wider = await collect(client.addSite({ knowledgeBase: 'crawled', crawlUrl: `${site.origin}/docs/limits.html`, followOtherOrigins: true, maxPages: 10, delayMs: 0 }));
    expect(wider.get('/elsewhere.html')?.outcome).toBe('added');
    expect(wider.get('/docs/limits.html')?.outcome).toBe('unchanged');
    const one = await collect(client.addSite({ knowledgeBase: 'crawled', crawlUrl: `${site.origin}/docs/limits.html`, maxPages: 1, delayMs: 0 }));
    expect([...one.keys()]).toEqual(['/docs/limits.html']);
  }, 120_000);

  it('spaces requests to one site by the delay', async () => {
    const from = site.requests.length;
    await collect(client.addSite({ knowledgeBase: 'crawled', crawlUrl: `${site.origin}/docs/limits.html`, maxPages: 3, delayMs: 300, concurrency: 4 }));
    const times = site.requests.slice(from).map((r) => r.at);
    expect(times.length).toBeGreaterThanOrEqual(3);
    // A delay can only make gaps longer: the bound holds however loaded the machine is.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(290);
  }, 120_000);

  it('refuses bad requests with INVALID_ARGUMENT before fetching anything', async () => {
    const first = (request: Partial<v1.AddSiteRequest>) => grpcCode(client.addSite({ knowledgeBase: 'docs', ...request }).next());
    expect(await first({ sitemapUrl: `${site.origin}/sitemap.xml`, crawlUrl: `${site.origin}/` })).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/exactly one/) });
    expect(await first({})).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await first({ crawlUrl: 'ftp://example.org/' })).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/http/) });
    expect(await first({ crawlUrl: `${site.origin}/`, maxPages: 20_000 })).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/max_pages/) });
    expect(await first({ crawlUrl: `${site.origin}/`, concurrency: 50 })).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/concurrency/) });
    expect(await grpcCode(client.addSite({ knowledgeBase: 'nope', crawlUrl: `${site.origin}/` }).next())).toMatchObject({ code: status.NOT_FOUND });
    expect(await first({ sitemapUrl: `${site.origin}/no-sitemap.xml` })).toMatchObject({ code: status.FAILED_PRECONDITION, details: expect.stringMatching(/could not read the sitemap .*HTTP 404/) });
  }, 60_000);

  it('trellis ingest --crawl prints one line per page and follows indexing', async () => {
    await client.createKnowledgeBase({ name: 'cli' });
    const result = await trellis(['--server', server.grpcAddress, 'ingest', 'cli', '--crawl', `${site.origin}/docs/guards.html`, '--max-pages', '2', '--delay-ms', '0'], {}, 120_000);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/\+ \[1\/\d\] http:\/\/127\.0\.0\.1:\d+\/docs\/guards\.html {2}version 1/);
    expect(result.stdout).toMatch(/\+ \[2\/2\] http:\/\/127\.0\.0\.1:\d+\/docs\/limits\.html {2}version 1/);
    const documents = await client.listAllDocuments('cli');
    expect(documents.map((d) => d.status)).toEqual(['INDEX_STATUS_GRAPHED', 'INDEX_STATUS_GRAPHED']);
  }, 120_000);
});
