/** Characters of a title at most (the documents.title column is 512). */
export const MAX_TITLE_CHARS = 500;
/** How far into an HTML file its <title> is looked for: it belongs in the head. */
export const HTML_HEAD_CHARS = 65_536;

/** What a document is about, in the words of its source (what retrieval matches names against). */
export interface TitleSources {
  /** The document's metadata: a `title` there wins (a caller knows best). */
  readonly metadata: Readonly<Record<string, string>>;
  /** The parsed text: markdown front matter `title:` or its first `# heading`. */
  readonly text: string;
  readonly filename: string;
  /** The file as uploaded, when it is HTML: its <title> (the parsed text drops it). */
  readonly html?: string;
}

/**
 * The one place a document's title is decided: metadata `title`, else the format's own
 * (HTML <title>, markdown front matter or first level-1 heading), else the file name
 * without its extension.
 */
export function documentTitle(sources: TitleSources): string {
  const candidates = [sources.metadata.title, sources.html === undefined ? undefined : htmlTitle(sources.html), markdownTitle(sources.text), baseName(sources.filename)];
  for (const candidate of candidates) {
    const title = candidate?.replace(/\s+/g, ' ').trim() ?? '';
    if (title !== '') return title.slice(0, MAX_TITLE_CHARS);
  }
  return '';
}

function htmlTitle(html: string): string | undefined {
  const match = /<title[^>]*>([^<]*)<\/title>/i.exec(html.slice(0, HTML_HEAD_CHARS));
  return match?.[1] === undefined ? undefined : decodeEntities(match[1]);
}

function markdownTitle(text: string): string | undefined {
  const front = /^---\r?\n([\s\S]*?)\r?\n---/.exec(text);
  const fromFront = front ? /^title:\s*(.+)$/m.exec(front[1]!)?.[1]?.replace(/^(['"])(.*)\1$/, '$2') : undefined;
  if (fromFront) return fromFront;
  return /^#[ \t]+(.+?)[ \t#]*$/m.exec(text)?.[1];
}

function baseName(filename: string): string {
  const last = filename.split(/[\\/]/).pop() ?? filename;
  const dot = last.lastIndexOf('.');
  return dot > 0 ? last.slice(0, dot) : last;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name.startsWith('#x') || name.startsWith('#X')) return String.fromCodePoint(parseInt(name.slice(2), 16));
    if (name.startsWith('#')) return String.fromCodePoint(Number(name.slice(1)));
    return ENTITIES[name.toLowerCase()] ?? whole;
  });
}
