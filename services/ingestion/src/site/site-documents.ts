import { Parser } from 'htmlparser2';

/** A sitemap's entries: page URLs (`urlset`) or further sitemaps (`sitemapindex`). */
export interface SitemapEntries {
  readonly pages: URL[];
  readonly sitemaps: URL[];
}

/**
 * The `<loc>` of every `<url>` and `<sitemap>` in a sitemap (sitemaps.org protocol), resolved
 * against the sitemap's own URL; anything that is not an http(s) URL is skipped. Read with a
 * streaming XML tokenizer: no entity expansion, no DTD, so a hostile sitemap costs its size.
 */
export function sitemapEntries(xml: string, base: URL): SitemapEntries {
  const pages: URL[] = [];
  const sitemaps: URL[] = [];
  let parent: 'url' | 'sitemap' | null = null;
  let inLoc = false;
  let loc = '';
  const parser = new Parser(
    {
      onopentag(name) {
        const local = localName(name);
        if (local === 'url' || local === 'sitemap') parent = local;
        else if (local === 'loc' && parent !== null) {
          inLoc = true;
          loc = '';
        }
      },
      ontext(text) {
        if (inLoc) loc += text;
      },
      onclosetag(name) {
        const local = localName(name);
        if (local === 'loc' && inLoc) {
          inLoc = false;
          const url = resolvedHttpUrl(decodeXml(loc.trim()), base);
          if (url !== null) (parent === 'sitemap' ? sitemaps : pages).push(url);
        } else if (local === 'url' || local === 'sitemap') parent = null;
      },
    },
    { xmlMode: true, decodeEntities: false },
  );
  parser.write(xml);
  parser.end();
  return { pages, sitemaps };
}

/**
 * The pages an HTML page links to: `<a href>` targets resolved against the page (and its
 * `<base href>`), fragments dropped, http(s) only. Links marked `rel="nofollow"` are not
 * followed, nor any link of a page whose robots meta tag says `nofollow`.
 */
export function pageLinks(html: string, page: URL): URL[] {
  const links: URL[] = [];
  let base = page;
  let nofollow = false;
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'base' && attributes.href) base = resolvedHttpUrl(attributes.href, page) ?? base;
        else if (name === 'meta' && attributes.name?.toLowerCase() === 'robots' && /\bnofollow\b|\bnone\b/i.test(attributes.content ?? '')) nofollow = true;
        else if (name === 'a' && attributes.href && !/\bnofollow\b/i.test(attributes.rel ?? '')) {
          const url = resolvedHttpUrl(attributes.href, base);
          if (url !== null) links.push(url);
        }
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  return nofollow ? [] : links;
}

function localName(tag: string): string {
  return tag.slice(tag.indexOf(':') + 1).toLowerCase();
}

/** `href` resolved against `base`, without its fragment; null unless it is an http(s) URL. */
function resolvedHttpUrl(href: string, base: URL): URL | null {
  try {
    const url = new URL(href, base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    url.hash = '';
    return url;
  } catch {
    return null;
  }
}

/** The five predefined XML entities and numeric references; a sitemap needs no others. */
function decodeXml(text: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (!ref.startsWith('#')) return named[ref.toLowerCase()] ?? whole;
    const code = /^#x/i.test(ref) ? Number.parseInt(ref.slice(2), 16) : Number(ref.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
