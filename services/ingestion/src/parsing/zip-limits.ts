import { inflateRawSync } from 'node:zlib';
import { ParseFailure } from './parse-failure';

export interface ZipLimits {
  /** Total bytes every entry may inflate to, together. */
  readonly maxDecompressedBytes: number;
  readonly maxEntries: number;
}

const END_OF_CENTRAL_DIRECTORY = 0x06054b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATED = 8;

/**
 * Checks a zip archive (a DOCX) before a parser opens it: at most `maxEntries` entries, and all
 * of them together inflating to at most `maxDecompressedBytes`. The sizes an archive declares
 * can lie, so every entry is really inflated, into a buffer that stops growing at the bytes
 * still allowed: a 2 MB archive that would inflate to 2 GB costs at most the cap in memory and
 * is refused as soon as it passes it. Entries sharing their data (overlapping-entry bombs)
 * are counted once per entry, as a parser would read them.
 */
export function assertZipWithinLimits(bytes: Uint8Array, limits: ZipLimits): void {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfCentralDirectory(view);
  const entries = view.readUInt16LE(end + 10);
  if (entries === 0xffff || view.readUInt32LE(end + 16) === 0xffffffff) throw new ParseFailure('ZIP64 archives are not supported');
  if (entries > limits.maxEntries) throw new ParseFailure(`the archive has ${entries} entries, more than the limit of ${limits.maxEntries}`);
  let offset = view.readUInt32LE(end + 16);
  let remaining = limits.maxDecompressedBytes;
  for (let i = 0; i < entries; i++) {
    if (offset + 46 > view.length || view.readUInt32LE(offset) !== CENTRAL_ENTRY) throw new ParseFailure('the archive directory is damaged');
    const method = view.readUInt16LE(offset + 10);
    const compressedSize = view.readUInt32LE(offset + 20);
    const localOffset = view.readUInt32LE(offset + 42);
    const data = entryData(view, localOffset, compressedSize);
    const inflated = method === STORED ? data.length : method === DEFLATED ? inflatedSize(data, remaining, limits) : unsupported(method);
    remaining -= inflated;
    if (remaining < 0) throw tooLarge(limits);
    offset += 46 + view.readUInt16LE(offset + 28) + view.readUInt16LE(offset + 30) + view.readUInt16LE(offset + 32);
  }
}

function findEndOfCentralDirectory(view: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  const earliest = Math.max(0, view.length - 22 - 0xffff);
  for (let at = view.length - 22; at >= earliest; at--) {
    if (view.readUInt32LE(at) === END_OF_CENTRAL_DIRECTORY) return at;
  }
  throw new ParseFailure('not a zip archive (no central directory)');
}

function entryData(view: Buffer, localOffset: number, compressedSize: number): Buffer {
  if (localOffset + 30 > view.length || view.readUInt32LE(localOffset) !== LOCAL_HEADER) throw new ParseFailure('the archive has a damaged entry');
  const start = localOffset + 30 + view.readUInt16LE(localOffset + 26) + view.readUInt16LE(localOffset + 28);
  if (start + compressedSize > view.length) throw new ParseFailure('the archive is truncated');
  return view.subarray(start, start + compressedSize);
}

function inflatedSize(data: Buffer, remaining: number, limits: ZipLimits): number {
  if (remaining <= 0) throw tooLarge(limits);
  try {
    // One byte over what is left tells "too large" from "exactly fits".
    return inflateRawSync(data, { maxOutputLength: remaining + 1 }).length;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(limits);
    throw new ParseFailure(`the archive has a damaged entry (${(error as Error).message})`);
  }
}

function unsupported(method: number): never {
  throw new ParseFailure(`the archive uses compression method ${method}, which is not supported`);
}

function tooLarge(limits: ZipLimits): ParseFailure {
  return new ParseFailure(`the archive inflates to more than ${Math.round(limits.maxDecompressedBytes / 1024 / 1024)} MB (TRELLIS_MAX_DECOMPRESSED_BYTES)`);
}
