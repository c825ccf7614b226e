import { asciidocMarkdown } from './asciidoc-markdown';
import { assertHtmlDepthWithin } from './html-depth';
import type { DocumentKind } from './mime-types';
import { ParseFailure } from './parse-failure';
import { assertPdfStreamsWithin } from './pdf-limits';
import { assertZipWithinLimits } from './zip-limits';

// Each parse worker loads only the parser its document needs: loading all three cost a
// worker about 150 ms, most of it pdf.js.
/* eslint-disable @typescript-eslint/no-require-imports */
const htmlParser = () => require('html-to-text') as typeof import('html-to-text');
const pdfParser = () => require('pdf-parse') as typeof import('pdf-parse');
const docxParser = () => require('mammoth') as typeof import('mammoth');
// Markdown's HTML and MDX's JSX are read with helpers of @trellis/contracts: loaded by the
// workers of those kinds only.
const requiredStoredMarkdown: StoredMarkdown = (kind, decoded) => (require('./markdown-text') as typeof import('./markdown-text')).storedMarkdown(kind, decoded);
/* eslint-enable @typescript-eslint/no-require-imports */

/** How markdown and MDX become the markdown they are stored as (markdown-text.ts). */
export type StoredMarkdown = (kind: 'markdown' | 'mdx', decoded: string) => string;

/** Bounds on what one document may cost to parse, besides its parse time. */
export interface ExtractionLimits {
  /** What a DOCX's entries, or a PDF's Flate streams, may inflate to, together. */
  readonly maxDecompressedBytes: number;
  readonly maxZipEntries: number;
  readonly maxHtmlDepth: number;
  /** Pages of a PDF read for text; later pages are left out. */
  readonly maxPdfPages: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  maxDecompressedBytes: 200 * 1024 * 1024,
  maxZipEntries: 5_000,
  maxHtmlDepth: 1_000,
  maxPdfPages: 5_000,
};

/**
 * Text of a document's bytes by kind: markdown without its HTML, MDX as that markdown, source
 * code as it is. It runs inside the parse worker too, so a workspace library is loaded only
 * for the kinds that need one. Every failure is a ParseFailure with a message a user can act on.
 * `storedMarkdown` is markdown-text.ts's, required on first use; a caller that has it loaded
 * passes it (a require of a TypeScript source fails under vitest).
 */
export async function extractText(kind: DocumentKind, bytes: Uint8Array, filename: string, limits: ExtractionLimits, storedMarkdown: StoredMarkdown = requiredStoredMarkdown): Promise<string> {
  switch (kind) {
    case 'text':
    case 'code':
      return decodeUtf8(bytes, filename);
    case 'markdown':
    case 'mdx':
      return storedMarkdown(kind, decodeUtf8(bytes, filename));
    case 'asciidoc':
      return asciidocMarkdown(decodeUtf8(bytes, filename));
    case 'html':
      return htmlText(decodeUtf8(bytes, filename), filename, limits);
    case 'pdf':
      return parsePdf(bytes, filename, limits);
    case 'docx':
      return parseDocx(bytes, filename, limits);
  }
}

export function decodeUtf8(bytes: Uint8Array, filename: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new ParseFailure(`"${filename}" is not valid UTF-8 text; convert it to UTF-8 and upload again`);
  }
}

function htmlText(html: string, filename: string, limits: ExtractionLimits): string {
  try {
    assertHtmlDepthWithin(html, limits.maxHtmlDepth);
  } catch (error) {
    throw new ParseFailure(`could not read HTML "${filename}": ${(error as Error).message}`);
  }
  return htmlParser().convert(html, {
    wordwrap: false,
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'script', format: 'skip' },
      { selector: 'style', format: 'skip' },
      { selector: 'nav', format: 'skip' },
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    ],
  });
}

async function parsePdf(bytes: Uint8Array, filename: string, limits: ExtractionLimits): Promise<string> {
  if (!Buffer.from(bytes.subarray(0, 1024)).toString('latin1').includes('%PDF-')) {
    throw new ParseFailure(`"${filename}" is not a PDF file (no %PDF header)`);
  }
  try {
    assertPdfStreamsWithin(bytes, limits.maxDecompressedBytes);
  } catch (error) {
    throw new ParseFailure(`could not read PDF "${filename}": ${(error as Error).message}`);
  }
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const parser = new (pdfParser().PDFParse)({ data: new Uint8Array(bytes), verbosity: 0 });
  try {
    // Pages joined by a paragraph break, without pdf-parse's "-- 1 of 3 --" markers (which would
    // be indexed as text, and make a PDF without text look like one with).
    const result = await parser.getText({ first: limits.maxPdfPages, pageJoiner: '\n\n' });
    return result.text;
  } catch (error) {
    throw new ParseFailure(`could not read PDF "${filename}": ${(error as Error).message}`);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

async function parseDocx(bytes: Uint8Array, filename: string, limits: ExtractionLimits): Promise<string> {
  try {
    assertZipWithinLimits(bytes, { maxDecompressedBytes: limits.maxDecompressedBytes, maxEntries: limits.maxZipEntries });
    const result = await docxParser().extractRawText({ buffer: Buffer.from(bytes) });
    return result.value;
  } catch (error) {
    // A TypeError is the reader tripping over XML it could not make sense of: say that, not its internals.
    const reason = error instanceof TypeError ? 'its parts are not valid Word XML' : (error as Error).message;
    throw new ParseFailure(`could not read DOCX "${filename}": ${reason}`);
  }
}
