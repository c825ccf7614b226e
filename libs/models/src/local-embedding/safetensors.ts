import { readFileSync } from 'node:fs';

export interface SafeTensor {
  readonly shape: readonly number[];
  readonly values: Float32Array;
}

/**
 * Reads the float tensors of a `.safetensors` file: an 8-byte little-endian header length,
 * a JSON header of name → dtype, shape and byte offsets, then the raw data. F16 and BF16 are
 * widened to F32; other dtypes (position id buffers) are skipped.
 */
export function readSafetensors(path: string): Map<string, SafeTensor> {
  const file = readFileSync(path);
  if (file.length < 8) throw new Error(`${path} is not a safetensors file (too short)`);
  const headerLength = Number(file.readBigUInt64LE(0));
  if (headerLength <= 0 || 8 + headerLength > file.length) throw new Error(`${path} is not a safetensors file (bad header length)`);
  let header: Record<string, { dtype?: string; shape?: number[]; data_offsets?: [number, number] }>;
  try {
    header = JSON.parse(file.subarray(8, 8 + headerLength).toString('utf8'));
  } catch {
    throw new Error(`${path} is not a safetensors file (header is not JSON)`);
  }
  const base = 8 + headerLength;
  const tensors = new Map<string, SafeTensor>();
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__' || !info.shape || !info.data_offsets) continue;
    const [start, end] = info.data_offsets;
    if (base + end > file.length || start > end) throw new Error(`${path}: tensor ${name} lies outside the file (truncated?)`);
    const bytes = file.subarray(base + start, base + end);
    const values = toFloat32(bytes, info.dtype ?? '');
    if (values) tensors.set(name, { shape: info.shape, values });
  }
  return tensors;
}

function toFloat32(bytes: Buffer, dtype: string): Float32Array | null {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  switch (dtype) {
    case 'F32': {
      const out = new Float32Array(bytes.byteLength / 4);
      for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
      return out;
    }
    case 'F16': {
      const out = new Float32Array(bytes.byteLength / 2);
      for (let i = 0; i < out.length; i++) out[i] = halfToFloat(view.getUint16(i * 2, true));
      return out;
    }
    case 'BF16': {
      const out = new Float32Array(bytes.byteLength / 2);
      const word = new DataView(new ArrayBuffer(4));
      for (let i = 0; i < out.length; i++) {
        word.setUint32(0, view.getUint16(i * 2, true) << 16);
        out[i] = word.getFloat32(0);
      }
      return out;
    }
    default:
      return null;
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}
