/**
 * The memory the scan kernel (vector-kernel.ts) reads: one index's rows, their units and sign
 * bits, the query and the scores, in a WebAssembly memory of the index's own.
 */
import { kernelModule, wasmApi } from './vector-kernel';
import type { KernelExports, WasmApi, WasmModule } from './vector-kernel';

const PAGE = 65_536;
/** wasm32 addresses 4 GiB; an index past that keeps its rows in JS arrays. */
const MAX_PAGES = 65_536;
const align16 = (bytes: number) => Math.ceil(bytes / 16) * 16;

/**
 * Bytes of a row's sign bits: d bits in whole 16-byte steps, or none past 31 steps (3,968
 * dimensions), where scanBits's byte lanes could overflow.
 */
export const signBytes = (d: number) => (d <= 31 * 128 ? Math.ceil(d / 128) * 16 : 0);

/**
 * Byte offsets in an index's memory, each 16-byte aligned: rows from 0, then units, query,
 * scores (a scan's, or its Hamming distances), the rows' sign bits and the query's.
 */
interface Layout {
  readonly units: number;
  readonly query: number;
  readonly scores: number;
  readonly signs: number;
  readonly querySigns: number;
  readonly pages: number;
}

function layout(valueBytes: 1 | 4, n: number, d: number): Layout {
  const units = align16(n * d * valueBytes);
  const query = units + align16(valueBytes === 1 ? n * 4 : 0);
  // An int8 query is kept widened to int16 (codeScan).
  const scores = query + align16(d * valueBytes * (valueBytes === 1 ? 2 : 1));
  const signs = scores + align16(n * 4);
  const querySigns = signs + n * signBytes(d);
  return { units, query, scores, signs, querySigns, pages: Math.ceil((querySigns + signBytes(d)) / PAGE) };
}

/**
 * One index's rows, row units, query and scores, laid out in a WebAssembly memory of its own so
 * the kernel reads the rows where they are stored: a query copies d values in, not n × d. The
 * memory is sized once for a capacity of rows and never grows, so the typed-array views over it
 * stay attached; scans read the first `count` rows. Pages of rows never written are not resident.
 */
export class ScanMemory {
  readonly rows: Float32Array | Int8Array;
  readonly units: Float32Array;
  /** The query as the kernel reads it: float32, or int8 codes widened to int16. */
  private readonly query: Float32Array | Int16Array;
  private readonly scores: Float32Array;
  /** The scores' bytes as the Hamming distances scanBits writes there. */
  private readonly distances: Int32Array;
  /** Each row's sign bits (bit i set where value i > 0), signBytes(d) a row; none past 3,968 dimensions. */
  private readonly signs: Uint8Array;
  private readonly querySigns: Uint8Array;
  /**
   * Which rows' sign bits are written. They are written when a search first needs them (a load
   * or a refresh that wrote them all would cost 71 ms for 52k entities of 512 dimensions, 260 for
   * 187k relationships, whether or not a search ever used them), or copied with their row.
   */
  private readonly signed: Uint8Array;
  /** Each signed row's count of values that are 0: what says the rows are dense. */
  private readonly zeros: Uint16Array;
  /** Whether every row in use has its sign bits written. */
  private signsComplete = false;
  private dense: boolean | undefined;
  /** Rows in use, from the first: what a scan scores. */
  private rowCount: number;
  private readonly kernel: KernelExports;

  private constructor(api: WasmApi, module: WasmModule, int8: boolean, n: number, d: number, at: Layout) {
    const memory = new api.Memory({ initial: at.pages, maximum: at.pages });
    this.rows = int8 ? new Int8Array(memory.buffer, 0, n * d) : new Float32Array(memory.buffer, 0, n * d);
    this.units = new Float32Array(memory.buffer, at.units, int8 ? n : 0);
    this.query = int8 ? new Int16Array(memory.buffer, at.query, d) : new Float32Array(memory.buffer, at.query, d);
    this.scores = new Float32Array(memory.buffer, at.scores, n);
    this.distances = new Int32Array(memory.buffer, at.scores, n);
    this.signs = new Uint8Array(memory.buffer, at.signs, n * signBytes(d));
    this.querySigns = new Uint8Array(memory.buffer, at.querySigns, signBytes(d));
    this.signed = new Uint8Array(n);
    this.zeros = new Uint16Array(n);
    this.rowCount = n;
    this.kernel = new api.Instance(module, { env: { memory } }).exports as KernelExports;
  }

  /**
   * Whether the rows' sign bits say where they point (hammingDistances): they are kept (not past
   * 3,968 dimensions) and the rows are dense, as a neural model's vectors are. A sparse vector
   * (hash embeddings: a few dozen of 512 values not 0) has the same 0 bit in most places, whatever
   * its text, so its distances say little; at 100k hash-embedded chunks a shortlist of 1 % held
   * 14–28 % of the true top 10.
   */
  get hasSigns(): boolean {
    if (this.querySigns.length === 0) return false;
    if (this.dense === undefined) {
      this.signRows();
      let zeros = 0;
      for (let row = 0; row < this.rowCount; row++) zeros += this.zeros[row]!;
      this.dense = zeros <= this.rowCount * this.query.length * MAX_ZERO_SHARE;
    }
    return this.dense;
  }

  /** Rows the memory holds at most. */
  get capacity(): number {
    return this.signed.length;
  }

  /** Scans from now on score the first `count` rows. */
  setCount(count: number): void {
    if (count > this.capacity) throw new RangeError(`${count} rows do not fit a memory of ${this.capacity}`);
    if (count > this.rowCount) this.signsComplete = false;
    this.rowCount = count;
  }

  /** Copies row `from` (values, unit and sign bits) over row `to`. */
  moveRow(to: number, from: number): void {
    const d = this.query.length;
    this.rows.copyWithin(to * d, from * d, (from + 1) * d);
    if (this.units.length > 0) this.units[to] = this.units[from]!;
    if (this.signed[from] !== 1) return this.unsign(to);
    const width = this.querySigns.length;
    this.signs.copyWithin(to * width, from * width, (from + 1) * width);
    this.zeros[to] = this.zeros[from]!;
    this.signed[to] = 1;
  }

  /** Row `row`'s values are being written anew: its sign bits are written again when a search needs them. */
  unsign(row: number): void {
    this.signed[row] = 0;
    this.signsComplete = false;
  }

  /**
   * Takes the sign bits of `source`'s row `from`, when it has written them, for `row`, whose values
   * were copied as stored from that row: a refresh writes the signs of the rows it changed only.
   */
  copySigns(row: number, source: ScanMemory | null, from: number): void {
    const width = this.querySigns.length;
    if (source === null || source.signed[from] !== 1 || source.querySigns.length !== width || this.signed[row] === 1) return;
    this.signs.set(source.signs.subarray(from * width, (from + 1) * width), row * width);
    this.zeros[row] = source.zeros[from]!;
    this.signed[row] = 1;
  }

  /** Writes the sign bits of every row that has none yet. */
  private signRows(): void {
    const width = this.querySigns.length;
    if (this.signsComplete || width === 0) return;
    const d = this.query.length;
    for (let row = 0; row < this.rowCount; row++) {
      if (this.signed[row] === 1) continue;
      this.zeros[row] = writeSigns(this.rows.subarray(row * d, (row + 1) * d), this.signs.subarray(row * width, (row + 1) * width));
      this.signed[row] = 1;
    }
    this.signsComplete = true;
  }

  /**
   * Every row's Hamming distance from the query's sign bits: how many of the d dimensions differ
   * in sign. A view the next scan overwrites, as the scores are.
   */
  hammingDistances(query: Float32Array): Int32Array {
    this.signRows();
    writeSigns(query, this.querySigns);
    this.kernel.scanBits(this.querySigns.byteOffset, this.signs.byteOffset, this.rowCount, this.querySigns.length, this.distances.byteOffset);
    return this.distances.subarray(0, this.rowCount);
  }

  /**
   * Memory for n rows of d values, or null when SIMD is not validated, the rows pass what wasm32
   * can address, or the engine refuses the memory (it caps how many it keeps: some thousands).
   */
  static create(precision: 'float32' | 'int8', n: number, d: number): ScanMemory | null {
    const module = kernelModule();
    const api = wasmApi();
    const int8 = precision === 'int8';
    const at = layout(int8 ? 1 : 4, n, d);
    if (module === null || api === undefined || at.pages > MAX_PAGES) return null;
    try {
      return new ScanMemory(api, module, int8, n, d, at);
    } catch (error) {
      if (error instanceof RangeError) return null;
      throw error;
    }
  }

  /**
   * Every row's dot product with `query` (float32 rows). The scores are a view the next scan
   * overwrites: read them before scanning again.
   */
  scanFloat(query: Float32Array): Float32Array {
    this.query.set(query);
    this.kernel.scanFloat(this.query.byteOffset, 0, this.rowCount, this.query.length, this.scores.byteOffset);
    return this.scores.subarray(0, this.rowCount);
  }

  /**
   * The scores of the listed rows only, as a scan gives them, by the same kernel run on one row
   * at a time: a walk scores a few thousand rows by id, which the JS loops did at 2.7 µs a row
   * (3,000 rows of 384 int8 codes: 8 ms, here 1.4–2.4). `codes` and `unit` for int8 rows; float32
   * rows take the query itself.
   */
  scoreRows(query: Float32Array | Int8Array, unit: number, rows: readonly number[]): Float32Array {
    this.query.set(query);
    const d = this.query.length;
    const out = new Float32Array(rows.length);
    const at = { query: this.query.byteOffset, units: this.units.byteOffset, scores: this.scores.byteOffset };
    const scores = this.scores;
    const kernel = this.kernel;
    if (this.rows instanceof Int8Array) {
      for (let i = 0; i < rows.length; i++) {
        kernel.scanCodes(at.query, rows[i]! * d, at.units + rows[i]! * 4, 1, d, unit, at.scores);
        out[i] = scores[0]!;
      }
    } else {
      for (let i = 0; i < rows.length; i++) {
        kernel.scanFloat(at.query, rows[i]! * d * 4, 1, d, at.scores);
        out[i] = scores[0]!;
      }
    }
    return out;
  }

  /** Every row's code dot product with `codes`, times `unit` × the row's unit (int8 rows); same view as scanFloat. */
  scanCodes(codes: Int8Array, unit: number): Float32Array {
    this.query.set(codes);
    this.kernel.scanCodes(this.query.byteOffset, 0, this.units.byteOffset, this.rowCount, this.query.length, unit, this.scores.byteOffset);
    return this.scores.subarray(0, this.rowCount);
  }
}

/** Rows whose values are 0 in more than this share are sparse: their sign bits are not used. */
const MAX_ZERO_SHARE = 0.1;

/**
 * Sets bit i of `out` where values[i] > 0 (the bytes past d stay 0 on both sides of a
 * comparison); returns how many values are 0.
 */
function writeSigns(values: ArrayLike<number>, out: Uint8Array): number {
  out.fill(0);
  let zeros = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if (value > 0) out[i >>> 3]! |= 1 << (i & 7);
    else if (value === 0) zeros++;
  }
  return zeros;
}
