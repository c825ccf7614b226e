/**
 * The scalar loops over a matrix's rows: what VectorIndex scores with where the SIMD kernel does
 * not run (small indexes, engines without SIMD), and how rows are normalised and quantised.
 */

/** Writes v's int8 codes at `offset` (its largest component becomes ±127) and returns what one unit is worth. */
export function quantise(v: Float32Array, codes: Int8Array, offset: number): number {
  let largest = 0;
  for (let i = 0; i < v.length; i++) largest = Math.max(largest, Math.abs(v[i]!));
  const unit = largest / 127;
  if (unit > 0) for (let i = 0; i < v.length; i++) codes[offset + i] = Math.round(v[i]! / unit);
  return unit;
}

export function dot(q: Float32Array, m: Float32Array, offset: number, d: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 3 < d; i += 4) {
    s0 += q[i]! * m[offset + i]!;
    s1 += q[i + 1]! * m[offset + i + 1]!;
    s2 += q[i + 2]! * m[offset + i + 2]!;
    s3 += q[i + 3]! * m[offset + i + 3]!;
  }
  for (; i < d; i++) s0 += q[i]! * m[offset + i]!;
  return s0 + s1 + s2 + s3;
}

/**
 * The dot product of two int8 code rows, in integers: a row of 512 codes sums to at most
 * 512 × 127² (about 8.3 million), far inside the 32-bit range the `| 0` keeps V8 in.
 */
export function codeDot(q: Int8Array, m: Int8Array, offset: number, d: number): number {
  let sum = 0;
  let i = 0;
  for (; i + 3 < d; i += 4) sum = (sum + q[i]! * m[offset + i]! + q[i + 1]! * m[offset + i + 1]! + q[i + 2]! * m[offset + i + 2]! + q[i + 3]! * m[offset + i + 3]!) | 0;
  for (; i < d; i++) sum = (sum + q[i]! * m[offset + i]!) | 0;
  return sum;
}

export function normalized(v: Float32Array, dimensions: number): Float32Array {
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += (v[i] ?? 0) ** 2;
  const out = new Float32Array(dimensions);
  if (norm === 0) return out;
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) out[i] = (v[i] ?? 0) * scale;
  return out;
}
