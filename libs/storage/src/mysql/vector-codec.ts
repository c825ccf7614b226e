import { bufferToVector } from '@trellis/vectors';

/**
 * How embeddings travel to and from the server on each storage path.
 *
 * TiDB's VECTOR type takes and returns the text form '[0.1,-2,3e-7]'. A float32 widened to a
 * JS number prints as the shortest decimal that reads back to the same double, which is also
 * exactly the original float32, so the text form loses nothing.
 */
export function vectorToText(vector: Float32Array): string {
  let text = '[';
  for (let i = 0; i < vector.length; i++) {
    const value = vector[i]!;
    // VECTOR rejects NaN and ±Infinity; a broken embedding must fail loudly, not silently.
    if (!Number.isFinite(value)) throw new RangeError(`embedding component ${i} is not finite`);
    text += i === 0 ? String(value) : `,${value}`;
  }
  return `${text}]`;
}

export function textToVector(text: string): Float32Array {
  const body = text.trim().replace(/^\[/, '').replace(/\]$/, '').trim();
  if (body === '') return new Float32Array(0);
  return Float32Array.from(body.split(',').map((part) => Number(part)));
}

/** The BLOB path stores float32 little-endian bytes (vectorToBuffer), the same layout as the SQLite adapter. */
export function blobToVector(value: unknown): Float32Array {
  if (!Buffer.isBuffer(value)) throw new TypeError('embedding column did not return binary data');
  return bufferToVector(value);
}
