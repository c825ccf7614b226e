import { basename } from 'node:path';
import { TrellisError } from '@trellis/contracts';

export const MAX_FILENAME_CHARS = 255;
export const MAX_SOURCE_URI_CHARS = 2048;
export const MAX_METADATA_ENTRIES = 64;
export const MAX_METADATA_KEY_CHARS = 128;
export const MAX_METADATA_VALUE_CHARS = 2048;

/** C0 and C1 controls (NUL, newline, escape, ...), line separators and bidirectional overrides. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

function refuseControls(value: string, field: string): void {
  const found = CONTROL.exec(value);
  if (found) throw TrellisError.invalid(`${field} contains the control character U+${found[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`);
}

/** A document's file name as stored: its last path segment, at most 255 characters, no controls. */
export function validateFilename(raw: string): string {
  refuseControls(raw, 'filename');
  const filename = basename(raw.trim());
  if (filename === '') throw TrellisError.invalid('filename is required');
  if (filename.length > MAX_FILENAME_CHARS) throw TrellisError.invalid(`filename is longer than ${MAX_FILENAME_CHARS} characters`);
  return filename;
}

export function validateSourceUri(sourceUri: string, field = 'source_uri'): string {
  refuseControls(sourceUri, field);
  if (sourceUri.length > MAX_SOURCE_URI_CHARS) throw TrellisError.invalid(`${field} is longer than ${MAX_SOURCE_URI_CHARS} characters`);
  return sourceUri;
}

export function validateDocumentMetadata(metadata: Record<string, string>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_ENTRIES) throw TrellisError.invalid(`metadata has more than ${MAX_METADATA_ENTRIES} entries`);
  for (const [key, value] of entries) {
    if (key.trim() === '') throw TrellisError.invalid('metadata has an empty key');
    if (key.length > MAX_METADATA_KEY_CHARS) throw TrellisError.invalid(`metadata key "${key.slice(0, 32)}…" is longer than ${MAX_METADATA_KEY_CHARS} characters`);
    if (value.length > MAX_METADATA_VALUE_CHARS) throw TrellisError.invalid(`metadata["${key}"] is longer than ${MAX_METADATA_VALUE_CHARS} characters`);
    refuseControls(key, 'a metadata key');
  }
  return metadata;
}
