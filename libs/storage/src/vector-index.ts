import { TopK } from './vector-math';

/**
 * An in-memory exact-search index: ids and their vectors in one contiguous matrix, so a
 * query is a tight loop of dot products instead of decoding one BLOB per row. Vectors are
 * normalised on insert, so dot product = cosine similarity.
 */
export class VectorIndex {
  private readonly matrix: Float32Array;
  private readonly rowOf = new Map<string, number>();

  constructor(
    readonly ids: readonly string[],
    vectors: readonly Float32Array[],
    /** Optional group per row (the chunk's document), for filtered search. */
    readonly groups: readonly string[] = [],
    /** Optional stamp per row: what changes when the row's vector does (see refreshMatrix). */
    readonly stamps: readonly string[] = [],
  ) {
    const dimensions = vectors[0]?.length ?? 0;
    this.dimensions = dimensions;
    this.matrix = new Float32Array(ids.length * dimensions);
    vectors.forEach((v, row) => {
      let norm = 0;
      for (let i = 0; i < dimensions; i++) norm += (v[i] ?? 0) ** 2;
      const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let i = 0; i < dimensions; i++) this.matrix[row * dimensions + i] = (v[i] ?? 0) * scale;
      this.rowOf.set(ids[row]!, row);
    });
  }

  readonly dimensions: number;

  get size(): number {
    return this.ids.length;
  }

  /** The stamp the row of `id` was loaded with; undefined when the id is not in the index. */
  stampOf(id: string): string | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.stamps[row];
  }

  /** The normalised vector of `id` (a view into the matrix); undefined when the id is not in the index. */
  vectorOf(id: string): Float32Array | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.matrix.subarray(row * this.dimensions, (row + 1) * this.dimensions);
  }

  /** The k most similar rows, optionally only rows whose group is in `groups`. */
  search(query: Float32Array, k: number, groups?: ReadonlySet<string>): Array<{ item: string; score: number }> {
    const q = normalized(query, this.dimensions);
    const scores = new Float32Array(this.ids.length);
    this.scoreAll(q, scores);
    const top = new TopK<string>(k);
    for (let row = 0; row < this.ids.length; row++) {
      if (groups && !groups.has(this.groups[row]!)) continue;
      top.offer(this.ids[row]!, scores[row]!);
    }
    return top.result();
  }

  /** Similarity of the query to each listed id that is in the index. */
  similarities(query: Float32Array, ids: readonly string[]): Map<string, number> {
    const q = normalized(query, this.dimensions);
    const out = new Map<string, number>();
    for (const id of ids) {
      const row = this.rowOf.get(id);
      if (row !== undefined) out.set(id, dot(q, this.matrix, row * this.dimensions, this.dimensions));
    }
    return out;
  }

  /** Every row's dot product with q; locals and a 4-way unrolled loop keep V8's hot path tight. */
  private scoreAll(q: Float32Array, out: Float32Array): void {
    const m = this.matrix;
    const d = this.dimensions;
    for (let row = 0, offset = 0; row < out.length; row++, offset += d) out[row] = dot(q, m, offset, d);
  }
}

function dot(q: Float32Array, m: Float32Array, offset: number, d: number): number {
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

function normalized(v: Float32Array, dimensions: number): Float32Array {
  let norm = 0;
  for (let i = 0; i < dimensions; i++) norm += (v[i] ?? 0) ** 2;
  const out = new Float32Array(dimensions);
  if (norm === 0) return out;
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) out[i] = (v[i] ?? 0) * scale;
  return out;
}
