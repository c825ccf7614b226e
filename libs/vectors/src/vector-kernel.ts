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

/** The module's functions, as an instance over a memory exports them. */
export interface KernelExports {
  scanFloat(query: number, rows: number, n: number, d: number, out: number): void;
  scanCodes(query: number, rows: number, units: number, n: number, d: number, unit: number, out: number): void;
  scanBits(query: number, rows: number, n: number, bytes: number, out: number): void;
}

/** A compiled module; opaque here. */
export interface WasmModule {
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
