import { inflateSync } from 'node:zlib';
import { ParseFailure } from './parse-failure';

/** The keyword that opens a stream's data, with its end of line. */
const STREAM_START = /stream\r?\n/g;

/**
 * Refuses a PDF whose Flate streams (page contents, object streams, fonts) together inflate to
 * more than `maxDecompressedBytes`, before pdf.js decodes them: its decoders would grow buffers
 * outside the JavaScript heap, which the worker's heap limit does not bound. Each stream that
 * starts like zlib data is inflated into a buffer that stops at the bytes still allowed;
 * streams that are not zlib data or are damaged count for nothing here (pdf.js copes with them).
 */
export function assertPdfStreamsWithin(bytes: Uint8Array, maxDecompressedBytes: number): void {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = view.toString('latin1');
  let remaining = maxDecompressedBytes;
  STREAM_START.lastIndex = 0;
  for (let match = STREAM_START.exec(text); match !== null; match = STREAM_START.exec(text)) {
    if (text.startsWith('end', match.index - 3)) continue;
    const start = match.index + match[0].length;
    const end = text.indexOf('endstream', start);
    if (end < 0) return;
    STREAM_START.lastIndex = end + 'endstream'.length;
    if (!looksLikeZlib(view, start)) continue;
    let inflated: number;
    try {
      inflated = inflateSync(view.subarray(start, end), { maxOutputLength: remaining + 1 }).length;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(maxDecompressedBytes);
      continue;
    }
    remaining -= inflated;
    if (remaining < 0) throw tooLarge(maxDecompressedBytes);
  }
}

/** A zlib header: deflate with a window of at most 32 KB, and a valid check value. */
function looksLikeZlib(view: Buffer, at: number): boolean {
  if (at + 2 > view.length) return false;
  const cmf = view[at]!;
  const flg = view[at + 1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

function tooLarge(maxDecompressedBytes: number): ParseFailure {
  return new ParseFailure(`its streams inflate to more than ${Math.round(maxDecompressedBytes / 1024 / 1024)} MB (TRELLIS_MAX_DECOMPRESSED_BYTES)`);
}
