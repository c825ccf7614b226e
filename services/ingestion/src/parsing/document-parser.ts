import { TrellisError } from '@trellis/contracts';
import { SUPPORTED_EXTENSIONS, kindOf, languageOf, resolveMimeType } from './mime-types';
import { storedMarkdown } from './markdown-text';
import type { DocumentKind } from './mime-types';
import { sourceAsMarkdown } from './source-code';
import { ParseFailure } from './parse-failure';
import { parseInWorker } from './parse-runner';
import type { ParseBudget } from './parse-runner';
import { DEFAULT_EXTRACTION_LIMITS, extractText } from './text-extraction';
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
 * here throws anything else for bad input. Plain text, markdown, MDX and source files of up to
 * 1 MB are decoded in place (markdown and MDX lose their embedded HTML; source files become a
 * fenced block of their language); larger ones, and AsciiDoc, HTML, PDF and DOCX, are parsed in
 * a worker thread bounded in time and memory.
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
  const decodedInPlace = DECODED_KINDS.has(kind) && bytes.byteLength <= MAX_IN_PLACE_BYTES;
  const raw = decodedInPlace ? await extractInPlace(kind, bytes, filename, limits) : await parseInWorker({ kind, bytes, filename, limits }, limits);
  const text = normalizeWhitespace(raw);
  if (text.trim() === '') throw TrellisError.invalid(`"${filename}" contains no text`);
  if (kind === 'code') {
    // Stored as markdown, one fenced block under the file's name: chunks cut it between lines
    // and keep each piece fenced with its language.
    const language = languageOf(mimeType) ?? 'text';
    return { mimeType: 'text/markdown', text: sourceAsMarkdown(filename, language, text), metadata: { language } };
  }
  // AsciiDoc is parsed into the markdown it is stored and split as; MDX is stored as the markdown it holds.
  return { mimeType: kind === 'asciidoc' || kind === 'mdx' ? 'text/markdown' : mimeType, text, metadata: {} };
}

/** Kinds that are text already: decoded (and markdown's HTML read) in place while they are small (see text-extraction.ts). */
const DECODED_KINDS: ReadonlySet<DocumentKind> = new Set(['text', 'markdown', 'mdx', 'code']);

/**
 * Past this size a text kind is decoded in the parse worker too, within the parse budget: a
 * 3 MB markdown's HTML took 65–190 ms to read, all of it on the event loop. Below it, reading
 * in place stalls the loop for less than the worker would add to the upload (about 0.1 s to
 * start, 0.5 s for markdown, whose fence rules come with @trellis/contracts).
 */
const MAX_IN_PLACE_BYTES = 1024 * 1024;

/** What the parse worker gives, read here; a failure is INVALID_ARGUMENT as the worker's is (parse-runner.ts). */
async function extractInPlace(kind: DocumentKind, bytes: Uint8Array, filename: string, limits: ExtractionLimits): Promise<string> {
  try {
    return await extractText(kind, bytes, filename, limits, storedMarkdown);
  } catch (error) {
    throw TrellisError.invalid(error instanceof ParseFailure ? error.message : `could not parse "${filename}": ${(error as Error).message}`);
  }
}

function normalizeWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\t\f\v ]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
