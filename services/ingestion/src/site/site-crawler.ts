import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { DocumentRecord } from '@trellis/storage';
import type { CachedCopy, FetchedDocument, NotModified } from '../url-fetch/url-fetcher';
import { HttpStatusError } from '../url-fetch/url-fetcher';
import { ALLOW_ALL, DISALLOW_ALL, parseRobots } from './robots-rules';
import type { RobotsRules } from './robots-rules';
import { pageLinks, sitemapEntries } from './site-documents';

/** What the crawler needs from the rest of ingestion. */
export interface SitePort {
  /** Refuses (INVALID_ARGUMENT) a URL the fetcher may not reach, as AddDocumentFromUrl does. */
  checkReachable(url: URL): Promise<void>;
  /** Fetches under the URL fetcher's rules (public addresses only, size and time limits). */
  fetch(url: URL, copy: CachedCopy): Promise<FetchedDocument | NotModified>;
  /** The validators of the stored copy of a page, or null when there is none. */
  cachedCopy(url: URL): Promise<CachedCopy | null>;
  /** Indexes a fetched page under its URL. */
  ingest(page: FetchedDocument, requested: URL): Promise<{ document: DocumentRecord; unchanged: boolean }>;
}

export interface SiteCrawl {
  /** `sitemap`: the pages a sitemap lists; `crawl`: pages reached by following links from `start`. */
  readonly mode: 'sitemap' | 'crawl';
  readonly start: URL;
  readonly maxPages: number;
  /** Crawl only: follow links to the start page's origin only. */
  readonly sameOrigin: boolean;
  /** Least time between two requests to one origin; robots.txt may ask for more. */
  readonly delayMs: number;
  /** Pages fetched and indexed at the same time. */
  readonly concurrency: number;
  readonly userAgent: string;
}

export type PageOutcome = 'added' | 'updated' | 'unchanged' | 'not-modified' | 'failed' | 'disallowed';

export interface PageResult {
  readonly url: string;
  readonly outcome: PageOutcome;
  readonly error: string;
  readonly document: DocumentRecord | null;
  /** Pages handled so far, this one included, and pages known so far. */
  readonly done: number;
  readonly found: number;
}

/** Sitemaps read at most from one sitemap index, nested ones included. */
const MAX_SITEMAPS = 50;
const MAX_SITEMAP_DEPTH = 3;
/** The longest delay a robots.txt may impose; a site asking for more is crawled at this pace. */
const MAX_CRAWL_DELAY_MS = 30_000;
/** Links whose path ends like this lead to assets, not to pages worth fetching. */
const ASSET = /\.(png|jpe?g|gif|svg|webp|ico|css|js|mjs|map|woff2?|ttf|eot|mp4|mp3|webm|zip|gz|tgz|tar|exe|dmg|iso)$/i;

/**
 * Indexes a web site page by page: the URLs of a sitemap (nested sitemap indexes followed), or
 * a breadth-first crawl from a start page. robots.txt is read once per origin and obeyed
 * (RFC 9309: a missing one allows all, an unreachable one forbids all); requests to one
 * origin are spaced by the delay or the site's crawl-delay, whichever is longer; at most
 * `concurrency` pages are in flight. A page already held is fetched conditionally (ETag,
 * Last-Modified) when its links are not needed, and a page whose content did not change is
 * not indexed again. Every page yields one result, failures included; one bad page never
 * stops the rest.
 */
export async function* crawlSite(crawl: SiteCrawl, port: SitePort): AsyncGenerator<PageResult> {
  await port.checkReachable(crawl.start);
  const site = new SiteSession(crawl, port);
  const queue: URL[] = crawl.mode === 'sitemap' ? await site.sitemapPages(crawl.start) : [crawl.start];
  const seen = new Set(queue.map((u) => u.href));
  const inFlight = new Map<number, Promise<{ key: number; url: URL; visit: Visit }>>();
  let next = 0;
  let done = 0;
  for (;;) {
    while (inFlight.size < crawl.concurrency && next < queue.length && next < crawl.maxPages) {
      const key = next;
      const url = queue[next++]!;
      inFlight.set(key, site.visit(url).then((visit) => ({ key, url, visit })));
    }
    if (inFlight.size === 0) return;
    const { key, url, visit } = await Promise.race(inFlight.values());
    inFlight.delete(key);
    for (const link of visit.links) {
      if (seen.has(link.href) || ASSET.test(link.pathname)) continue;
      if (crawl.sameOrigin && link.origin !== crawl.start.origin) continue;
      seen.add(link.href);
      queue.push(link);
    }
    done++;
    yield { ...visit.result, url: url.href, done, found: Math.min(queue.length, crawl.maxPages) };
  }
}

interface Visit {
  readonly result: Omit<PageResult, 'url' | 'done' | 'found'>;
  readonly links: URL[];
}

/** One crawl's view of the site: robots rules and request pacing per origin. */
class SiteSession {
  private readonly robots = new Map<string, Promise<RobotsRules>>();
  private readonly nextRequestAt = new Map<string, number>();

  constructor(
    private readonly crawl: SiteCrawl,
    private readonly port: SitePort,
  ) {}

  /** Every page the sitemap at `url` lists, nested sitemaps included, in order, without repeats. */
  async sitemapPages(url: URL): Promise<URL[]> {
    const pages = new Map<string, URL>();
    const pending: Array<{ url: URL; depth: number }> = [{ url, depth: 0 }];
    const read = new Set<string>();
    while (pending.length > 0 && read.size < MAX_SITEMAPS && pages.size < this.crawl.maxPages) {
      const { url: sitemap, depth } = pending.shift()!;
      if (read.has(sitemap.href)) continue;
      read.add(sitemap.href);
      const fetched = await this.fetchAllowed(sitemap, {});
      if (!fetched.ok || 'notModified' in fetched.page) {
        if (depth === 0) throw new TrellisError(ErrorCode.FailedPrecondition, `could not read the sitemap ${sitemap.href}: ${fetched.ok ? 'no body' : fetched.error}`);
        continue;
      }
      const entries = sitemapEntries(Buffer.from(fetched.page.bytes).toString('utf8'), fetched.page.url);
      for (const page of entries.pages) if (!pages.has(page.href)) pages.set(page.href, page);
      if (depth < MAX_SITEMAP_DEPTH) pending.push(...entries.sitemaps.map((s) => ({ url: s, depth: depth + 1 })));
    }
    return [...pages.values()].slice(0, this.crawl.maxPages);
  }

  /** Fetches and indexes one page, and reads its links when the crawl follows links. Never throws. */
  async visit(url: URL): Promise<Visit> {
    const failed = (error: string, outcome: PageOutcome = 'failed', links: URL[] = []): Visit => ({ result: { outcome, error, document: null }, links });
    try {
      // Links are read from the body, so a crawl fetches pages whole; a sitemap names its pages.
      const copy = this.crawl.mode === 'sitemap' ? ((await this.port.cachedCopy(url)) ?? {}) : {};
      const fetched = await this.fetchAllowed(url, copy);
      if (!fetched.ok) return failed(fetched.error, fetched.disallowed ? 'disallowed' : 'failed');
      if ('notModified' in fetched.page) return { result: { outcome: 'not-modified', error: '', document: null }, links: [] };
      const page = fetched.page;
      const links = this.crawl.mode === 'crawl' && /html/i.test(page.mimeType) ? pageLinks(Buffer.from(page.bytes).toString('utf8'), page.url) : [];
      try {
        const { document, unchanged } = await this.port.ingest(page, url);
        return { result: { outcome: unchanged ? 'unchanged' : document.version > 1 ? 'updated' : 'added', error: '', document }, links };
      } catch (error) {
        return failed(messageOf(error), 'failed', links);
      }
    } catch (error) {
      return failed(messageOf(error));
    }
  }

  private async fetchAllowed(
    url: URL,
    copy: CachedCopy,
  ): Promise<{ ok: true; page: FetchedDocument | NotModified } | { ok: false; error: string; disallowed: boolean }> {
    const rules = await this.rulesFor(url);
    if (!rules.allows(url)) return { ok: false, error: `robots.txt of ${url.origin} disallows ${url.pathname}`, disallowed: true };
    await this.pace(url.origin, rules);
    try {
      return { ok: true, page: await this.port.fetch(url, copy) };
    } catch (error) {
      return { ok: false, error: messageOf(error), disallowed: false };
    }
  }

  private rulesFor(url: URL): Promise<RobotsRules> {
    let rules = this.robots.get(url.origin);
    if (rules === undefined) {
      rules = this.readRobots(new URL('/robots.txt', url.origin));
      this.robots.set(url.origin, rules);
    }
    return rules;
  }

  private async readRobots(url: URL): Promise<RobotsRules> {
    // robots.txt is a request like any other; the site's own delay is not known before it.
    await this.pace(url.origin, ALLOW_ALL);
    try {
      const fetched = await this.port.fetch(url, {});
      if ('notModified' in fetched) return ALLOW_ALL;
      return parseRobots(Buffer.from(fetched.bytes).toString('utf8'), this.crawl.userAgent);
    } catch (error) {
      // RFC 9309 §2.3.1.3: a robots.txt that does not exist (4xx) allows all; one that cannot be
      // reached (5xx, network) must be taken to forbid all.
      if (error instanceof HttpStatusError && error.status >= 400 && error.status < 500) return ALLOW_ALL;
      return DISALLOW_ALL;
    }
  }

  /** Waits for this origin's next request slot. */
  private async pace(origin: string, rules: RobotsRules): Promise<void> {
    const delay = Math.max(this.crawl.delayMs, Math.min(MAX_CRAWL_DELAY_MS, (rules.crawlDelaySeconds ?? 0) * 1000));
    const now = Date.now();
    const at = Math.max(now, this.nextRequestAt.get(origin) ?? now);
    this.nextRequestAt.set(origin, at + delay);
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
