import { interner } from './stamp-digest';
import { ScanMemory } from './scan-memory';
import type { ScanKernel } from './vector-kernel';
import { TopK } from './vector-math';
import { codeDot, dot, normalized, quantise } from './row-loops';

/**
 * How a matrix keeps its rows: exact 32-bit floats, or one byte per dimension (scalar
 * quantisation: each normalised row scaled so its largest component is ±127, with that scale
 * kept per row). int8 takes a quarter of the memory; on 384–512-dimension embeddings its
 * similarities are within about 0.001 of the exact ones, so it suits candidates that are only
 * ranked, and not those compared against a threshold (entity resolution merges above one).
 */
export type MatrixPrecision = 'float32' | 'int8';

export interface VectorIndexOptions {
  /** Optional group per row (the chunk's document, whether a relationship is retrievable), for filtered search. */
  readonly groups?: readonly string[];
  /** Optional digest (stampDigest) per row of its stamp: what changes when the row's vector does (see refreshMatrix). */
  readonly digests?: ArrayLike<number>;
  readonly precision?: MatrixPrecision;
  /**
   * Which loop scans the rows (tests and benchmarks compare the two). Unset: SIMD where the
   * engine validates it and the index is large enough to gain from it, else JS.
   */
  readonly kernel?: ScanKernel;
  /** false: every search scores every row, however large the index (benchmarks compare the two). */
  readonly prefilter?: boolean;
  /**
   * Rows the index's memory holds room for (at least its rows): room a refresh fills in place
   * (refreshInPlace). Pages of rows not yet written are not resident.
   */
  readonly capacity?: number;
}

/** Rows as a matrix read streams them: vectors packed row after row, ids (and stamp digests and groups, where kept) by column. */
export interface RowSlice {
  readonly ids: readonly string[];
  /** Each row's stamp as its digest (stampDigest): the reader digests them, so no stamp string reaches the index's thread. */
  readonly digests: Float64Array;
  /** Empty when the rows have no groups. */
  readonly groups: readonly string[];
  readonly vectors: Float32Array;
}

/**
 * The rows an index is to hold after a refresh, in order, by column (no object per row: at 100k
 * chunks a refresh lists 340k rows of three matrices at the first search after a write).
 */
export interface RowListing {
  readonly ids: readonly string[];
  /** The digest of each row's stamp (stampDigest); may be longer than `ids`. */
  readonly digests: Float64Array;
  /** Each row's group; empty when the rows have none. */
  readonly groups: readonly string[];
}

/** An index being filled slice after slice with the rows it was sized for; `index()` once they are all in. */
export interface VectorIndexFilling {
  add(slice: RowSlice): void;
  index(): VectorIndex;
}

/**
 * Below this many stored values (about 170 rows of 384) an index keeps its rows in JS arrays: the
 * scan is microseconds either way, and the engine caps how many WebAssembly memories a process
 * holds (about 13,000 here), which refresh batches and small knowledge bases would spend.
 */
const SIMD_MIN_VALUES = 65_536;

/**
 * From this many rows a search is prefiltered by sign bits (search). Below it a scan is a
 * millisecond or two, and an exact one costs nothing worth saving.
 */
const PREFILTER_MIN_ROWS = 20_000;

/**
 * Rows a prefiltered search scores exactly: 2 % of the index, and at least 500 and 40 per row
 * asked for. On 30k chunks embedded by all-MiniLM-L6-v2 a shortlist of 1 % held 98.5 % of the
 * true top 10 and 92.5 % of the top 40, one of 2 % 99.7 % and 97.1 %, one of 5 % 100 % and
 * 99.4 % (docs/benchmarks.md); scoring it costs about half a microsecond a row.
 */
const shortlistSize = (k: number, n: number) => Math.max(500, 40 * k, Math.ceil(n / 50));

/**
 * An in-memory exact-search index: ids and their vectors in one contiguous matrix, so a
 * query is a tight loop of dot products instead of decoding one BLOB per row. Vectors are
 * normalised on insert, so dot product = cosine similarity (up to quantisation, with int8).
 */
export class VectorIndex {
  private rowIds: string[];
  private rowGroups: string[];
  private readonly rows: Float32Array | Int8Array;
  /** int8 only: what one unit of each row's codes is worth (its largest magnitude / 127). */
  private readonly units: Float32Array;
  /** Where the rows live when the SIMD kernel scans them; null when the JS loops do. */
  private readonly memory: ScanMemory | null;
  private rowOf = new Map<string, number>();
  /** Each row's stamp as its digest (stampDigest); 0 where no stamps were given. */
  private readonly digests: Float64Array;
  readonly precision: MatrixPrecision;
  readonly kernel: ScanKernel;
  private readonly prefilter: boolean;

  /** `capacity` (at least the rows the index will hold): more than `ids` while filling, or to leave room for refreshes. */
  private constructor(
    ids: string[],
    readonly dimensions: number,
    options: VectorIndexOptions,
    capacity = Math.max(ids.length, options.capacity ?? 0),
  ) {
    this.rowIds = ids;
    this.rowGroups = [...(options.groups ?? [])];
    this.digests = new Float64Array(capacity);
    if (options.digests !== undefined) this.digests.set(options.digests);
    this.precision = options.precision ?? 'float32';
    this.prefilter = options.prefilter ?? true;
    const n = capacity;
    const simd = options.kernel === 'simd' || (options.kernel === undefined && n * dimensions >= SIMD_MIN_VALUES);
    this.memory = simd ? ScanMemory.create(this.precision, n, dimensions) : null;
    this.kernel = this.memory === null ? 'js' : 'simd';
    this.rows = this.memory?.rows ?? (this.precision === 'int8' ? new Int8Array(n * dimensions) : new Float32Array(n * dimensions));
    this.units = this.memory?.units ?? new Float32Array(this.precision === 'int8' ? n : 0);
    ids.forEach((id, row) => this.rowOf.set(id, row));
    this.memory?.setCount(ids.length);
  }

  /** The rows' ids, in row order. */
  get ids(): readonly string[] {
    return this.rowIds;
  }

  /** Each row's group; empty when the rows have none. */
  get groups(): readonly string[] {
    return this.rowGroups;
  }

  /** An index of these vectors, one per id. */
  static of(ids: readonly string[], vectors: readonly Float32Array[], options: VectorIndexOptions = {}): VectorIndex {
    const index = new VectorIndex([...ids], vectors[0]?.length ?? 0, withSharedGroups(options));
    vectors.forEach((v, row) => index.store(row, normalized(v, index.dimensions)));
    return index;
  }

  /**
   * An index of `count` rows of `dimensions`, stored as their slices arrive: a matrix read
   * streams its rows (at 100k chunks 183k relationship rows are 282 MB of floats), so only
   * the index's own memory and a slice or two are held at once, never the whole read. Stamps
   * are kept, and groups when the slices carry them. `index()` refuses a matrix short of rows.
   */
  static filling(count: number, dimensions: number, options: Pick<VectorIndexOptions, 'precision' | 'kernel' | 'capacity'> = {}): VectorIndexFilling {
    const shared = interner();
    const index = new VectorIndex([], dimensions, options, Math.max(count, options.capacity ?? 0));
    const { rowIds: ids, rowGroups: groups } = index;
    return {
      add: (slice) => {
        if (ids.length + slice.ids.length > count) throw new Error(`a matrix sized for ${count} rows was sent more`);
        slice.ids.forEach((id, i) => {
          const row = ids.push(id) - 1;
          index.rowOf.set(id, row);
          index.digests[row] = slice.digests[i]!;
          if (slice.groups.length > 0) groups.push(shared(slice.groups[i]!));
          index.store(row, normalized(slice.vectors.subarray(i * dimensions, (i + 1) * dimensions), dimensions));
        });
        index.memory?.setCount(ids.length);
      },
      index: () => {
        if (ids.length !== count) throw new Error(`a matrix sized for ${count} rows was sent ${ids.length}`);
        return index;
      },
    };
  }

  /**
   * An index of these ids, each row copied as stored from the first of `sources` that holds it
   * (every id must be in one). No row is decoded and encoded again, so a refresh keeps the
   * unchanged rows bit for bit. Null when the sources differ in dimensions or precision.
   */
  static assembled(ids: readonly string[], sources: readonly VectorIndex[], options: Omit<VectorIndexOptions, 'precision'> = {}): VectorIndex | null {
    const first = sources.find((s) => s.size > 0) ?? sources[0];
    if (first === undefined || sources.some((s) => s.size > 0 && (s.dimensions !== first.dimensions || s.precision !== first.precision))) return null;
    const index = new VectorIndex([...ids], first.dimensions, { ...withSharedGroups(options), precision: first.precision });
    const d = index.dimensions;
    ids.forEach((id, row) => {
      const source = sources.find((s) => s.rowOf.has(id))!;
      const from = source.rowOf.get(id)!;
      index.rows.set(source.rows.subarray(from * d, (from + 1) * d), row * d);
      if (index.precision === 'int8') index.units[row] = source.units[from]!;
      index.memory?.copySigns(row, source.memory, from);
    });
    return index;
  }

  /**
   * Brings the index to `rows` in place, in its own memory, and says whether it did. A row that
   * is in one of `fresh` (rows read again: new, or whose stamp changed) takes its values from the
   * first that holds it; every other row must be one this index holds with that stamp, and keeps
   * its values, moved to its new place. Rows not listed are dropped.
   *
   * A refresh that assembled a new index instead held the old and the new matrix at once: at 100k
   * chunks 150 MB more, the first search after every write, until a collection freed the old one.
   * In place, only what changed is written. Changes nothing and answers false where the rows do
   * not fit the memory's capacity, the index keeps its rows in JS arrays (small indexes), the fresh
   * rows differ in shape, or the rows kept are not in the order this index holds them (the read's
   * order changed): the caller then assembles a new index.
   */
  refreshInPlace(rows: RowListing, fresh: readonly VectorIndex[]): boolean {
    const memory = this.memory;
    const count = rows.ids.length;
    if (memory === null || count > memory.capacity) return false;
    if (fresh.some((f) => f.size > 0 && (f.dimensions !== this.dimensions || f.precision !== this.precision))) return false;
    // Where each row comes from: row from[row] of fresh[sourceOf[row]], or of this index where sourceOf[row] is -1.
    const from = new Int32Array(count);
    const sourceOf = new Int32Array(count);
    const digests = rows.digests.subarray(0, count);
    let last = -1;
    for (let row = 0; row < count; row++) {
      const id = rows.ids[row]!;
      const source = fresh.findIndex((f) => f.rowOf.has(id));
      if (source >= 0) {
        sourceOf[row] = source;
        from[row] = fresh[source]!.rowOf.get(id)!;
        continue;
      }
      const held = this.rowOf.get(id);
      if (held === undefined || this.digests[held] !== digests[row] || held <= last) return false;
      sourceOf[row] = -1;
      from[row] = held;
      last = held;
    }
    // The rows kept keep their order, so moving those that go to a lower place first, lowest first,
    // then those that go to a higher place, highest first, overwrites no row before it has moved.
    for (let row = 0; row < count; row++) if (sourceOf[row] === -1 && from[row]! > row) memory.moveRow(row, from[row]!);
    for (let row = count - 1; row >= 0; row--) if (sourceOf[row] === -1 && from[row]! < row) memory.moveRow(row, from[row]!);
    const d = this.dimensions;
    for (let row = 0; row < count; row++) {
      if (sourceOf[row] === -1) continue;
      const source = fresh[sourceOf[row]!]!;
      const at = from[row]!;
      memory.unsign(row);
      this.rows.set(source.rows.subarray(at * d, (at + 1) * d), row * d);
      if (this.precision === 'int8') this.units[row] = source.units[at]!;
      memory.copySigns(row, source.memory, at);
    }
    memory.setCount(count);
    const shared = interner();
    this.rowIds = [...rows.ids];
    this.rowGroups = this.rowGroups.length > 0 || rows.groups.some((g) => g !== '') ? Array.from(rows.ids, (_, row) => shared(rows.groups[row] ?? '')) : [];
    this.rowOf = new Map(this.rowIds.map((id, row) => [id, row]));
    this.digests.set(digests);
    return true;
  }

  get size(): number {
    return this.ids.length;
  }

  /** Bytes the rows take: what the precision saves. */
  get bytes(): number {
    return this.rows.byteLength + this.units.byteLength;
  }

  /** The index's own string for `id` where it holds the row: a listing that keeps it lets the read's copy go. */
  heldId(id: string): string | undefined {
    const row = this.rowOf.get(id);
    return row === undefined ? undefined : this.rowIds[row];
  }

  /** Whether the index holds `id` as of the stamp of this digest (stampDigest; the row was loaded with that stamp). */
  holds(id: string, digest: number): boolean {
    const row = this.rowOf.get(id);
    return row !== undefined && this.digests[row] === digest;
  }

  /**
   * The k most similar rows, optionally only rows whose group is in `groups`. From
   * PREFILTER_MIN_ROWS rows (SIMD kernel) the rows are first ranked by the sign bits they share
   * with the query and only a shortlist is scored (prefiltered); below, or where a narrow group
   * filter leaves too few of its rows in the shortlist, every row is scored.
   */
  search(query: Float32Array, k: number, groups?: ReadonlySet<string>): Array<{ item: string; score: number }> {
    const q = this.queryOf(query);
    return (this.prefilter && this.ids.length >= PREFILTER_MIN_ROWS && this.prefiltered(q, k, groups)) || this.scanned(q, k, groups);
  }

  /** Every row scored. */
  private scanned(q: Query, k: number, groups?: ReadonlySet<string>): Array<{ item: string; score: number }> {
    const scores = this.scoreAll(q);
    const top = new TopK<string>(k);
    // Most rows score below the k-th best so far: they are passed over with one comparison.
    let floor = top.floor;
    for (let row = 0; row < this.ids.length; row++) {
      const score = scores[row]!;
      if (score < floor || (groups && !groups.has(this.groups[row]!))) continue;
      top.offer(this.ids[row]!, score);
      floor = top.floor;
    }
    return top.result();
  }

  /**
   * The k best of a shortlist: the rows nearest the query in Hamming distance of their sign bits
   * (8 bytes a row for 64 dimensions, where the scan reads 64: memory, not arithmetic, bounds a
   * scan of 100k rows), at least shortlistSize(k, n) of them with every row as near as the last,
   * each scored exactly as a scan would. Null where the index keeps no sign bits, or `groups`
   * leaves fewer than half that many rows near the query.
   */
  private prefiltered(q: Query, k: number, groups?: ReadonlySet<string>): Array<{ item: string; score: number }> | null {
    const n = this.ids.length;
    const wanted = shortlistSize(k, n);
    // A shortlist of every row would score every row, after ranking them.
    if (wanted >= n || this.memory === null || !this.memory.hasSigns) return null;
    const distances = this.memory.hammingDistances(q.vector);
    const counts = new Int32Array(this.dimensions + 1);
    for (let row = 0; row < n; row++) counts[distances[row]!]!++;
    let limit = 0;
    for (let near = counts[0]!; near < wanted && limit < this.dimensions; ) near += counts[++limit]!;
    const rows: number[] = [];
    for (let row = 0; row < n; row++) if (distances[row]! <= limit && (groups === undefined || groups.has(this.groups[row]!))) rows.push(row);
    if (groups !== undefined && rows.length < wanted / 2) return null;
    // In row order, as a scan offers them: equal scores keep the order a scan gives them.
    const scores = this.scoreRows(q, rows);
    const top = new TopK<string>(k);
    rows.forEach((row, i) => top.offer(this.ids[row]!, scores[i]!));
    return top.result();
  }

  /** Similarity of the query to each listed id that is in the index, in float32 as a search's scores are. */
  similarities(query: Float32Array, ids: readonly string[]): Map<string, number> {
    const found: string[] = [];
    const rows: number[] = [];
    for (const id of ids) {
      const row = this.rowOf.get(id);
      if (row === undefined) continue;
      found.push(id);
      rows.push(row);
    }
    const scores = this.scoreRows(this.queryOf(query), rows);
    return new Map(found.map((id, i) => [id, scores[i]!]));
  }

  /** The query as the rows are kept: normalised, and with int8 rows quantised the same way. */
  private queryOf(query: Float32Array): Query {
    const vector = normalized(query, this.dimensions);
    if (this.precision === 'float32') return { vector, codes: NO_CODES, unit: 1 };
    const codes = new Int8Array(this.dimensions);
    return { vector, codes, unit: quantise(vector, codes, 0) };
  }

  private store(row: number, v: Float32Array): void {
    if (this.rows instanceof Float32Array) this.rows.set(v, row * this.dimensions);
    else this.units[row] = quantise(v, this.rows, row * this.dimensions);
  }

  private score(q: Query, row: number): number {
    const d = this.dimensions;
    return this.rows instanceof Float32Array ? dot(q.vector, this.rows, row * d, d) : codeDot(q.codes, this.rows, row * d, d) * q.unit * this.units[row]!;
  }

  /** The listed rows' dot products with q, in float32 as scoreAll gives them (bit for bit the same, for int8 rows). */
  private scoreRows(q: Query, rows: readonly number[]): Float32Array {
    if (this.memory !== null) return this.precision === 'int8' ? this.memory.scoreRows(q.codes, q.unit, rows) : this.memory.scoreRows(q.vector, 1, rows);
    return Float32Array.from(rows, (row) => this.score(q, row));
  }

  /**
   * Every row's dot product with q: by the SIMD kernel (a view it overwrites on the next scan), or
   * by JS loops, where locals and a 4-way unrolled loop keep V8's hot path tight.
   */
  private scoreAll(q: Query): Float32Array {
    if (this.memory !== null) return this.precision === 'int8' ? this.memory.scanCodes(q.codes, q.unit) : this.memory.scanFloat(q.vector);
    const out = new Float32Array(this.ids.length);
    const m = this.rows;
    const d = this.dimensions;
    if (m instanceof Float32Array) {
      for (let row = 0, offset = 0; row < out.length; row++, offset += d) out[row] = dot(q.vector, m, offset, d);
      return out;
    }
    const units = this.units;
    const codes = q.codes;
    const scale = q.unit;
    for (let row = 0, offset = 0; row < out.length; row++, offset += d) out[row] = codeDot(codes, m, offset, d) * scale * units[row]!;
    return out;
  }
}

/** The options with one string object per distinct group (a group per row is mostly repeats). */
function withSharedGroups<T extends VectorIndexOptions>(options: T): T {
  return options.groups === undefined ? options : { ...options, groups: options.groups.map(interner()) };
}

/** A query ready for either kind of row. */
interface Query {
  readonly vector: Float32Array;
  readonly codes: Int8Array;
  readonly unit: number;
}

const NO_CODES = new Int8Array(0);
