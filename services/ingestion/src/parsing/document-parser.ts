import { TrellisError } from '@trellis/contracts';
import { markdownWithoutHtml } from './markdown-html';
import { mdxToMarkdown } from './mdx-text';
import { SUPPORTED_EXTENSIONS, kindOf, languageOf, resolveMimeType } from './mime-types';
import { sourceAsMarkdown } from './source-code';
import { ParseFailure } from './parse-failure';
import { parseInWorker } from './parse-runner';
import type { ParseBudget } from './parse-runner';
import { DEFAULT_EXTRACTION_LIMITS, decodeUtf8 } from './text-extraction';
import type { ExtractionLimits } from './text-extraction';

export interface ParsedDocument {
  readonly mimeType: string;
  /**
   * Plain text; markdown keeps its markup so the splitter can follow its headings and code
   * blocks, with the HTML inside it reduced to text.
   */
  readonly text: string;
  /** What the parse learnt about the document (`language` of a source file). */
  readonly metadata: Record<string, string>;
}

/** Everything that bounds one document's parse. */
export type ParseLimits = ExtractionLimits & ParseBudget;

export const DEFAULT_PARSE_LIMITS: ParseLimits = { ...DEFAULT_EXTRACTION_LIMITS, timeoutMs: 60_000, maxHeapMb: 512 };

/**
 * Turns uploaded bytes into text. Every failure is an INVALID_ARGUMENT with a message a
 * user can act on, or RESOURCE_EXHAUSTED when the document passes its parse budget; nothing
 * here throws anything else for bad input. Plain text, markdown, MDX and source files are
 * decoded in place (markdown and MDX lose their embedded HTML; source files become a fenced
 * block of their language);
 * AsciiDoc, HTML, PDF and DOCX are parsed in a worker thread bounded in time and memory.
 */
export async function parseDocument(bytes: Uint8Array, filename: string, declaredMime: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): Promise<ParsedDocument> {
  const mimeType = resolveMimeType(filename, declaredMime);
  const kind = mimeType === undefined ? undefined : kindOf(mimeType);
  if (mimeType === undefined || kind === undefined) {
    throw TrellisError.invalid(
      `unsupported file type for "${filename}"${declaredMime ? ` (${declaredMime})` : ''}: supported are ${SUPPORTED_EXTENSIONS.map((e) => `.${e}`).join(', ')}`,
    );
  }
  if (bytes.byteLength === 0) throw TrellisError.invalid(`"${filename}" is empty`);
  if (kind === 'mdx') {
    // Stored as the markdown it holds, so it is split by its headings like any markdown.
    const text = normalizeWhitespace(markdownWithoutHtml(mdxToMarkdown(decodeInPlace(bytes, filename))));
    if (text.trim() === '') throw TrellisError.invalid(`"${filename}" contains no text`);
    return { mimeType: 'text/markdown', text, metadata: {} };
  }
  if (kind === 'code') {
    // Stored as markdown, one fenced block under the file's name: chunks cut it between lines
    // and keep each piece fenced with its language.
    const language = languageOf(mimeType) ?? 'text';
    const code = normalizeWhitespace(decodeInPlace(bytes, filename));
    if (code === '') throw TrellisError.invalid(`"${filename}" contains no text`);
    return { mimeType: 'text/markdown', text: sourceAsMarkdown(filename, language, code), metadata: { language } };
  }
  const raw =
    kind === 'text' ? decodeInPlace(bytes, filename)
    : kind === 'markdown' ? markdownWithoutHtml(decodeInPlace(bytes, filename))
    : await parseInWorker({ kind, bytes, filename, limits }, limits);
  const text = normalizeWhitespace(raw);
  if (text.trim() === '') throw TrellisError.invalid(`"${filename}" contains no text`);
  // AsciiDoc is parsed into the markdown it is stored and split as.
  return { mimeType: kind === 'asciidoc' ? 'text/markdown' : mimeType, text, metadata: {} };
}

function decodeInPlace(bytes: Uint8Array, filename: string): string {
  try {
    return decodeUtf8(bytes, filename);
  } catch (error) {
    throw error instanceof ParseFailure ? TrellisError.invalid(error.message) : error;
  }
}

function normalizeWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\t\f\v ]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
