/**
 * A 53-bit digest of a stamp (what changes when a row does: a content hash, a fingerprint of
 * columns), exact in a float64. Indexes keep it in a Float64Array instead of the stamp's string:
 * at 100k chunks the stamps were 600k strings and about 35 MB of heap, the digests 4 MB and no
 * objects for the collector to visit. A changed row is missed only if its new stamp has the same
 * digest, one chance in 2^53.
 */
export function stampDigest(stamp: string): number {
  // Two 32-bit FNV-1a passes over the UTF-16 code units, from different offset bases: 21 bits of
  // one and 32 of the other.
  let a = 0x811c9dc5;
  let b = 0x2f6b7a1d;
  for (let i = 0; i < stamp.length; i++) {
    const unit = stamp.charCodeAt(i);
    a = Math.imul(a ^ unit, 0x01000193);
    b = Math.imul(b ^ unit, 0x01000193) ^ (b >>> 15);
  }
  return (a >>> 11) * 2 ** 32 + (b >>> 0);
}

/**
 * A function that returns the same string object for equal values: a column of few distinct
 * values (whether a relationship is retrievable, a chunk's document) read row by row is
 * otherwise a string per row.
 */
export function interner(): (value: string) => string {
  const seen = new Map<string, string>();
  return (value) => {
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, value);
    return value;
  };
}
