import { convert as htmlToText } from 'html-to-text';
import mammoth from 'mammoth';
import { PDFParse } from 'pdf-parse';
import { TrellisError } from '@trellis/contracts';
import { SUPPORTED_EXTENSIONS, kindOf, resolveMimeType } from './mime-types';

export interface ParsedDocument {
  readonly mimeType: string;
  /** Plain text; markdown keeps its markup so the splitter can follow its headings. */
  readonly text: string;
}

/**
 * Turns uploaded bytes into text. Every failure is an INVALID_ARGUMENT with a message a
 * user can act on; nothing here throws anything else for bad input.
 */
export async function parseDocument(bytes: Uint8Array, filename: string, declaredMime: string): Promise<ParsedDocument> {
  const mimeType = resolveMimeType(filename, declaredMime);
  const kind = mimeType === undefined ? undefined : kindOf(mimeType);
  if (mimeType === undefined || kind === undefined) {
    throw TrellisError.invalid(
      `unsupported file type for "${filename}"${declaredMime ? ` (${declaredMime})` : ''}: supported are ${SUPPORTED_EXTENSIONS.map((e) => `.${e}`).join(', ')}`,
    );
  }
  if (bytes.byteLength === 0) throw TrellisError.invalid(`"${filename}" is empty`);
  const text = normalizeWhitespace(await extractText(kind, bytes, filename));
  if (text.trim() === '') throw TrellisError.invalid(`"${filename}" contains no text`);
  return { mimeType, text };
}

async function extractText(kind: NonNullable<ReturnType<typeof kindOf>>, bytes: Uint8Array, filename: string): Promise<string> {
  switch (kind) {
    case 'text':
    case 'markdown':
      return decodeUtf8(bytes, filename);
    case 'html':
      return htmlToText(decodeUtf8(bytes, filename), {
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
    case 'pdf':
      return parsePdf(bytes, filename);
    case 'docx':
      return parseDocx(bytes, filename);
  }
}

function decodeUtf8(bytes: Uint8Array, filename: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw TrellisError.invalid(`"${filename}" is not valid UTF-8 text; convert it to UTF-8 and upload again`);
  }
}

async function parsePdf(bytes: Uint8Array, filename: string): Promise<string> {
  if (!Buffer.from(bytes.subarray(0, 1024)).toString('latin1').includes('%PDF-')) {
    throw TrellisError.invalid(`"${filename}" is not a PDF file (no %PDF header)`);
  }
  // pdf.js takes ownership of the buffer it is given: hand it a copy.
  const parser = new PDFParse({ data: new Uint8Array(bytes), verbosity: 0 });
  try {
    const result = await parser.getText();
    return result.text;
  } catch (error) {
    throw TrellisError.invalid(`could not read PDF "${filename}": ${(error as Error).message}`);
  } finally {
    await parser.destroy().catch(() => undefined);
  }
}

async function parseDocx(bytes: Uint8Array, filename: string): Promise<string> {
  try {
    const result = await mammoth.extractRawText({ buffer: Buffer.from(bytes) });
    return result.value;
  } catch (error) {
    throw TrellisError.invalid(`could not read DOCX "${filename}": ${(error as Error).message}`);
  }
}

function normalizeWhitespace(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[\t\f\v ]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
