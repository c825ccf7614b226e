import { TrellisError } from '@trellis/contracts';
import { validateSourceUri } from '../document-request-limits';
import { USER_AGENT } from '../url-fetch/url-fetcher';
import type { SiteCrawl } from './site-crawler';

/** AddSite as ingestion receives it. */
export interface SiteRequest {
  readonly knowledgeBase: string;
  readonly sitemapUrl: string;
  readonly crawlUrl: string;
  readonly maxPages: number;
  readonly followOtherOrigins: boolean;
  /** Absent: the default delay; 0 is a valid delay. */
  readonly delayMs?: number;
  readonly concurrency: number;
  readonly metadata: Record<string, string>;
}

export const SITE_LIMITS = {
  defaultMaxPages: 100,
  maxPages: 10_000,
  defaultDelayMs: 500,
  maxDelayMs: 60_000,
  defaultConcurrency: 2,
  maxConcurrency: 8,
} as const;

/** The crawl a request asks for, or INVALID_ARGUMENT saying which field is wrong. */
export function siteCrawlOf(request: SiteRequest): SiteCrawl {
  const sitemap = request.sitemapUrl.trim();
  const crawl = request.crawlUrl.trim();
  if ((sitemap === '') === (crawl === '')) throw TrellisError.invalid('give exactly one of sitemap_url and crawl_url');
  const start = sitemap !== '' ? httpUrl(sitemap, 'sitemap_url') : httpUrl(crawl, 'crawl_url');
  if (request.maxPages > SITE_LIMITS.maxPages) throw TrellisError.invalid(`max_pages must be at most ${SITE_LIMITS.maxPages} (got ${request.maxPages})`);
  if (request.concurrency > SITE_LIMITS.maxConcurrency) throw TrellisError.invalid(`concurrency must be at most ${SITE_LIMITS.maxConcurrency} (got ${request.concurrency})`);
  if (request.delayMs !== undefined && request.delayMs > SITE_LIMITS.maxDelayMs) throw TrellisError.invalid(`delay_ms must be at most ${SITE_LIMITS.maxDelayMs} (got ${request.delayMs})`);
  return {
    mode: sitemap !== '' ? 'sitemap' : 'crawl',
    start,
    maxPages: request.maxPages || SITE_LIMITS.defaultMaxPages,
    sameOrigin: !request.followOtherOrigins,
    delayMs: request.delayMs ?? SITE_LIMITS.defaultDelayMs,
    concurrency: request.concurrency || SITE_LIMITS.defaultConcurrency,
    userAgent: USER_AGENT,
  };
}

/** An http(s) URL from a request field, or INVALID_ARGUMENT naming the field. */
export function httpUrl(value: string, field: string): URL {
  validateSourceUri(value, field);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw TrellisError.invalid(`${field} "${value.slice(0, 200)}" is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw TrellisError.invalid(`only http and https URLs can be added (${field} is ${url.protocol})`);
  return url;
}
