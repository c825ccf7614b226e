/**
 * The exact vector scan in WebAssembly SIMD. V8 does not vectorise the JS dot-product loops, so a
 * scan of every row costs one multiply-add per dimension; with 128-bit lanes it costs a quarter
 * (float32) or a sixteenth (int8) of the loads and a quarter of the adds.
 *
 * The module is written here byte by byte instead of committed as a binary or compiled from text,
 * so there is no build step and nothing to trust that cannot be read: functions of some forty
 * instructions each are small enough to emit by hand (wasm-binary.ts has the format).
 */

import {
  I32, F32, F64, V128, FUNC_TYPE, SECTION, EXTERN, F32_LOAD, I32_LOAD8_S, I32_LOAD16_S, F32_STORE,
  I32_ADD, I32_MUL, I32_AND, I32_SHL, F32_ADD, F32_MUL, F64_MUL, F32_DEMOTE_F64, F64_CONVERT_I32_S,
  F64_PROMOTE_F32, V128_LOAD, V128_LOAD8X8_S, I32X4_EXTRACT_LANE, F32X4_EXTRACT_LANE, I32X4_ADD,
  I32X4_DOT_I16X8_S, F32X4_ADD, F32X4_MUL, get, set, tee, i32, simd, at, zeroV128, advance,
  whileBelow, laneSum, functionBody, vector, name, section, I32_STORE, V128_XOR, I8X16_POPCNT, I8X16_ADD,
  I16X8_EXTADD_PAIRWISE_I8X16_U, I32X4_EXTADD_PAIRWISE_I16X8_U
} from './wasm-binary';

/** Which loop scores the rows: the WebAssembly SIMD kernel, or the scalar JS loops. */
export type ScanKernel = 'simd' | 'js';

/**
 * scanFloat(query, rows, n, d, out): out[r] = Σ query[i] · rows[r·d + i], float32, for r < n.
 * Four accumulators over 16 floats a step keep four independent add chains in flight; then steps
 * of 4, then the last d mod 4 one at a time. Pointers are byte addresses in the memory.
 */
function floatScan(): number[] {
  const [query, row, n, d, out] = [0, 1, 2, 3, 4];
  const [q, end, blockEnd, quadEnd, rowEnd, a0, a1, a2, a3, sum] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
  const locals = [[5, I32], [4, V128], [1, F32]];
  const product = (offset: number) => [...get(row), ...simd(V128_LOAD, ...at(offset)), ...get(q), ...simd(V128_LOAD, ...at(offset)), ...simd(F32X4_MUL)];
  const accumulate = (acc: number, offset: number) => [...get(acc), ...product(offset), ...simd(F32X4_ADD), ...set(acc)];
  const body = [
    ...get(out), ...get(n), ...i32(2), I32_SHL, I32_ADD, ...set(end),
    ...whileBelow(out, end, [
      ...zeroV128(), ...tee(a0), ...tee(a1), ...tee(a2), ...set(a3),
      ...get(query), ...set(q),
      ...get(row), ...get(d), ...i32(-16), I32_AND, ...i32(2), I32_SHL, I32_ADD, ...set(blockEnd),
      ...get(row), ...get(d), ...i32(-4), I32_AND, ...i32(2), I32_SHL, I32_ADD, ...set(quadEnd),
      ...get(row), ...get(d), ...i32(2), I32_SHL, I32_ADD, ...set(rowEnd),
      ...whileBelow(row, blockEnd, [
        ...accumulate(a0, 0), ...accumulate(a1, 16), ...accumulate(a2, 32), ...accumulate(a3, 48),
        ...advance(row, 64), ...advance(q, 64),
      ]),
      ...get(a0), ...get(a1), ...simd(F32X4_ADD), ...get(a2), ...get(a3), ...simd(F32X4_ADD), ...simd(F32X4_ADD), ...set(a0),
      ...whileBelow(row, quadEnd, [...accumulate(a0, 0), ...advance(row, 16), ...advance(q, 16)]),
      ...laneSum(a0, F32X4_EXTRACT_LANE, F32_ADD), ...set(sum),
      ...whileBelow(row, rowEnd, [
        ...get(sum), ...get(row), F32_LOAD, ...at(0), ...get(q), F32_LOAD, ...at(0), F32_MUL, F32_ADD, ...set(sum),
        ...advance(row, 4), ...advance(q, 4),
      ]),
      ...get(out), ...get(sum), F32_STORE, ...at(0),
      ...advance(out, 4),
    ]),
  ];
  return functionBody(locals, body);
}

/**
 * scanCodes(query, rows, units, n, d, unit, out): out[r] = (Σ query[i] · rows[r·d + i]) · unit ·
 * units[r] for r < n, the sum over int8 codes in int32 and the product in float64 (as the JS loop
 * does, so both give the same float32). The query comes widened to int16 (written once per scan),
 * so a step reads 8 row codes sign-extended to int16 lanes by the load itself, and i32x4.dot adds
 * their pairwise products with the query's into 4 int32 lanes: four such steps (32 codes) per loop
 * turn into four accumulators, then one of 16 codes, then the last d mod 16 one at a time. A sum
 * of 512 codes stays below 2^23.
 */
function codeScan(): number[] {
  const [query, row, units, n, d, unit, out] = [0, 1, 2, 3, 4, 5, 6];
  const [q, end, blockEnd, stepEnd, rowEnd, sum, a0, a1, a2, a3] = [7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
  const locals = [[6, I32], [4, V128]];
  /** acc += dot(8 row codes at row + codes, their 8 widened query codes). */
  const eight = (acc: number, codes: number) => [
    ...get(acc), ...get(row), ...simd(V128_LOAD8X8_S, ...at(codes)), ...get(q), ...simd(V128_LOAD, ...at(codes * 2)), ...simd(I32X4_DOT_I16X8_S), ...simd(I32X4_ADD), ...set(acc),
  ];
  const body = [
    ...get(out), ...get(n), ...i32(2), I32_SHL, I32_ADD, ...set(end),
    ...whileBelow(out, end, [
      ...zeroV128(), ...tee(a0), ...tee(a1), ...tee(a2), ...set(a3),
      ...get(query), ...set(q),
      ...get(row), ...get(d), ...i32(-32), I32_AND, I32_ADD, ...set(blockEnd),
      ...get(row), ...get(d), ...i32(-16), I32_AND, I32_ADD, ...set(stepEnd),
      ...get(row), ...get(d), I32_ADD, ...set(rowEnd),
      ...whileBelow(row, blockEnd, [...eight(a0, 0), ...eight(a1, 8), ...eight(a2, 16), ...eight(a3, 24), ...advance(row, 32), ...advance(q, 64)]),
      ...whileBelow(row, stepEnd, [...eight(a0, 0), ...eight(a1, 8), ...advance(row, 16), ...advance(q, 32)]),
      ...get(a0), ...get(a1), ...simd(I32X4_ADD), ...get(a2), ...get(a3), ...simd(I32X4_ADD), ...simd(I32X4_ADD), ...set(a0),
      ...laneSum(a0, I32X4_EXTRACT_LANE, I32_ADD), ...set(sum),
      ...whileBelow(row, rowEnd, [
        ...get(sum), ...get(row), I32_LOAD8_S, ...at(0), ...get(q), I32_LOAD16_S, ...at(0), I32_MUL, I32_ADD, ...set(sum),
        ...advance(row, 1), ...advance(q, 2),
      ]),
      ...get(out),
      ...get(sum), F64_CONVERT_I32_S, ...get(unit), F64_MUL, ...get(units), F32_LOAD, ...at(0), F64_PROMOTE_F32, F64_MUL, F32_DEMOTE_F64,
      F32_STORE, ...at(0),
      ...advance(out, 4), ...advance(units, 4),
    ]),
  ];
  return functionBody(locals, body);
}

/**
 * scanBits(query, rows, n, bytes, out): out[r] = the number of bits in which rows[r] (`bytes`
 * bytes, a multiple of 16) differs from the query: their Hamming distance, as an int32. Each 16
 * bytes are XORed and counted by i8x16.popcnt into 16 byte lanes (at most 8 each, so 31 steps fit
 * in a byte), then the lanes are added pairwise to 4 int32 lanes and those summed.
 */
function bitScan(): number[] {
  const [query, row, n, bytes, out] = [0, 1, 2, 3, 4];
  const [q, end, rowEnd, acc] = [5, 6, 7, 8];
  const locals = [[3, I32], [1, V128]];
  const body = [
    ...get(out), ...get(n), ...i32(2), I32_SHL, I32_ADD, ...set(end),
    ...whileBelow(out, end, [
      ...zeroV128(), ...set(acc),
      ...get(query), ...set(q),
      ...get(row), ...get(bytes), I32_ADD, ...set(rowEnd),
      ...whileBelow(row, rowEnd, [
        ...get(acc), ...get(row), ...simd(V128_LOAD, ...at(0)), ...get(q), ...simd(V128_LOAD, ...at(0)), ...simd(V128_XOR), ...simd(I8X16_POPCNT), ...simd(I8X16_ADD), ...set(acc),
        ...advance(row, 16), ...advance(q, 16),
      ]),
      ...get(acc), ...simd(I16X8_EXTADD_PAIRWISE_I8X16_U), ...simd(I32X4_EXTADD_PAIRWISE_I16X8_U), ...set(acc),
      ...get(out), ...laneSum(acc, I32X4_EXTRACT_LANE, I32_ADD), I32_STORE, ...at(0),
      ...advance(out, 4),
    ]),
  ];
  return functionBody(locals, body);
}

/** The module: imports its memory as env.memory (each index brings its own), exports the scans. */
export function kernelBytes(): Uint8Array {
  const floatType = [FUNC_TYPE, ...vector([[I32], [I32], [I32], [I32], [I32]]), 0];
  const codeType = [FUNC_TYPE, ...vector([[I32], [I32], [I32], [I32], [I32], [F64], [I32]]), 0];
  // scanBits has scanFloat's signature: five i32.
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
    ...section(SECTION.type, vector([floatType, codeType])),
    ...section(SECTION.import, vector([[...name('env'), ...name('memory'), EXTERN.memory, 0x00, 0x00 /* no maximum, at least 0 pages */]])),
    ...section(SECTION.function, vector([[0], [1], [0]])),
    ...section(SECTION.export, vector([[...name('scanFloat'), EXTERN.func, 0], [...name('scanCodes'), EXTERN.func, 1], [...name('scanBits'), EXTERN.func, 2]])),
    ...section(SECTION.code, vector([floatScan(), codeScan(), bitScan()])),
  ]);
}

interface KernelExports {
  scanFloat(query: number, rows: number, n: number, d: number, out: number): void;
  scanCodes(query: number, rows: number, units: number, n: number, d: number, unit: number, out: number): void;
  scanBits(query: number, rows: number, n: number, bytes: number, out: number): void;
}

/** A compiled module; opaque here. */
interface WasmModule {
  readonly compiled: unique symbol;
}

/**
 * The part of the WebAssembly JS API the kernel uses. The project compiles against ES2023 and
 * Node's types, neither of which declares the WebAssembly global (the DOM library does), so the
 * kernel states what it needs instead of pulling in the DOM's types everywhere.
 */
export interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: { env: { memory: WasmMemory } }) => { readonly exports: object };
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}

interface WasmMemory {
  readonly buffer: ArrayBuffer;
}

/** The engine's WebAssembly object; undefined in an engine without one. */
export const wasmApi = () => (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

let compiled: WasmModule | null | undefined;

/** The compiled module, or null where the engine does not validate SIMD (then the JS loops score). */
export function kernelModule(): WasmModule | null {
  if (compiled === undefined) {
    const api = wasmApi();
    const bytes = kernelBytes();
    compiled = api?.validate(bytes) === true ? new api.Module(bytes) : null;
  }
  return compiled;
}

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
