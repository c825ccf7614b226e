/**
 * What of a chunk the local extractor reads as language. Technical documentation mixes prose
 * with code and markdown syntax; a part-of-speech tagger reads `NestFactory.create(AppModule)`,
 * `**Hint**` or `Promise<void>` as proper nouns and makes entities of them. The prose view
 * blanks everything that is not prose — fenced code, inline code, emphasis and link syntax,
 * quote and heading markers, table pipes, admonition labels — with spaces of the same length,
 * so every offset into it is an offset into the chunk, and sentences and verbs stay where
 * they were.
 *
 * Inline code is not thrown away: a span that names a symbol (`ThrottlerModule`, `@Get()`,
 * `@nestjs/throttler`) becomes a mention typed `code`, at the span's place in the sentence, so
 * the symbol takes part in relationships with the prose around it. Its place in the prose is
 * held by a stand-in word of the same length (capitalised for a symbol, lower case for other
 * code), so the tagger still sees a noun where the writer put one: "The ThrottlerModule comes
 * from" must not read as "The comes from".
 */
export interface CodeMention {
  readonly name: string;
  readonly start: number;
  readonly end: number;
}

export interface ProseView {
  /** The chunk with non-prose characters blanked and inline code stood in for; same length as the chunk. */
  readonly prose: string;
  /** Symbols named in inline code, in order. */
  readonly codeMentions: readonly CodeMention[];
  /** The prose with the content of inline code put back: what a description quotes. */
  readonly readable: string;
}

/**
 * Labels that documentation puts before a note (GitHub alerts, Docusaurus and NestJS
 * admonitions): they frame a paragraph and name nothing.
 */
export const ADMONITION_LABELS: ReadonlySet<string> = new Set([
  'hint', 'note', 'notice', 'tip', 'info', 'warning', 'caution', 'important', 'danger', 'attention', 'error', 'success',
]);

const FENCE = /^( {0,3})(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:\n {0,3}\2[`~]*[ \t]*(?=\n|$)|$)/gm;
const INLINE_CODE = /(`+)([^`\n]+?)\1(?!`)/g;
const ADMONITION = new RegExp(
  `^([ \\t]*>[ \\t]*)(?:(?:${[...ADMONITION_LABELS].join('|')})[ \\t]+)?(\\*\\*|__)?(${[...ADMONITION_LABELS].join('|')})\\2?:?(?=\\s)`,
  'gim',
);
const LINK_TARGET = /\]\((?:[^()\s]|\([^()\s]*\))*\)/g;
const MARKERS = /^[ \t]*(?:>[ \t]*)+|^[ \t]*#{1,6}(?=\s)|\*\*|__|(?<![\p{L}\p{N}])[*_](?=\S)|(?<=\S)[*_](?![\p{L}\p{N}])|[[\]|]|<\/?[a-z][^>\n]*>/gimu;

/** A span's content that names a symbol rather than saying something in words. */
const SYMBOL = /^@?[A-Za-z_$][\w$]*(?:[./-][A-Za-z_$][\w$-]*)*(?:\(\))?$/;

export function proseView(text: string): ProseView {
  // Offsets are UTF-16 code units throughout, as in compromise's output.
  let prose = text.replace(FENCE, (block) => blank(block));
  const codeMentions: CodeMention[] = [];
  const inlineCode: Array<{ start: number; end: number }> = [];
  prose = prose.replace(INLINE_CODE, (span: string, ticks: string, content: string, offset: number) => {
    const start = offset + ticks.length;
    const end = offset + span.length - ticks.length;
    inlineCode.push({ start: offset, end: offset + span.length });
    const name = symbolName(content.trim());
    if (name !== null) codeMentions.push({ name, start, end });
    return standIn(span.length, name !== null);
  });
  prose = prose
    .replace(ADMONITION, (label: string, quote: string) => quote + blank(label.slice(quote.length)))
    .replace(LINK_TARGET, (target) => blank(target))
    .replace(MARKERS, (marker) => blank(marker));
  let readable = '';
  let at = 0;
  for (const span of inlineCode) {
    readable += prose.slice(at, span.start) + text.slice(span.start, span.end).replace(/`/g, ' ');
    at = span.end;
  }
  readable += prose.slice(at);
  return { prose, codeMentions, readable };
}

/**
 * The symbol an inline code span names, or null for code that is not one name (an
 * expression, a command line) or a plain lower-case word (`cats`, `ttl`), which reads as
 * a value, not as a symbol to look up. Call parentheses are dropped: `findAll()` names
 * `findAll`.
 */
export function symbolName(content: string): string | null {
  if (content.length < 2 || content.length > 60 || !SYMBOL.test(content)) return null;
  const name = content.replace(/\(\)$/, '');
  if (!/[A-Z@./_-]|\(\)$/.test(content)) return null;
  return name.length >= 2 ? name : null;
}

function standIn(length: number, symbol: boolean): string {
  return symbol ? `Q${'q'.repeat(length - 1)}` : 'q'.repeat(length);
}

function blank(s: string): string {
  return s.replace(/[^\n]/g, ' ');
}
