/**
 * The WebAssembly binary format, as much of it as the scan kernels (vector-kernel.ts) are written
 * in: value types, section ids, instructions (core spec §5; SIMD instructions after the 0xfd
 * prefix), their LEB128 encodings and a few shapes of code the kernels repeat.
 */

export const I32 = 0x7f;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export const FUNC_TYPE = 0x60;
export const SECTION = { type: 1, import: 2, function: 3, export: 7, code: 10 } as const;
export const EXTERN = { func: 0x00, memory: 0x02 } as const;
const EMPTY_BLOCK = 0x40;
const BLOCK = 0x02;
const LOOP = 0x03;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
export const F32_LOAD = 0x2a;
export const I32_LOAD8_S = 0x2c;
export const I32_LOAD16_S = 0x2e;
export const F32_STORE = 0x38;
export const I32_STORE = 0x36;
const I32_CONST = 0x41;
const I32_GE_U = 0x4f;
export const I32_ADD = 0x6a;
export const I32_MUL = 0x6c;
export const I32_AND = 0x71;
export const I32_SHL = 0x74;
export const F32_ADD = 0x92;
export const F32_MUL = 0x94;
export const F64_MUL = 0xa2;
export const F32_DEMOTE_F64 = 0xb6;
export const F64_CONVERT_I32_S = 0xb7;
export const F64_PROMOTE_F32 = 0xbb;
const SIMD = 0xfd;
export const V128_LOAD = 0x00;
export const V128_LOAD8X8_S = 0x01;
const V128_CONST = 0x0c;
export const I32X4_EXTRACT_LANE = 0x1b;
export const F32X4_EXTRACT_LANE = 0x1f;
export const V128_XOR = 0x51;
export const I8X16_POPCNT = 0x62;
export const I8X16_ADD = 0x6e;
export const I16X8_EXTADD_PAIRWISE_I8X16_U = 0x7d;
export const I32X4_EXTADD_PAIRWISE_I16X8_U = 0x7f;
export const I32X4_ADD = 0xae;
export const I32X4_DOT_I16X8_S = 0xba;
export const F32X4_ADD = 0xe4;
export const F32X4_MUL = 0xe6;

/** Unsigned LEB128, the binary format's encoding of every index, count and SIMD opcode. */
function leb(value: number): number[] {
  const out: number[] = [];
  do {
    const byte = value & 0x7f;
    value >>>= 7;
    out.push(value === 0 ? byte : byte | 0x80);
  } while (value !== 0);
  return out;
}

/** Signed LEB128, for i32.const (small masks only). */
function sleb(value: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = value & 0x7f;
    value >>= 7;
    const done = (value === 0 && (byte & 0x40) === 0) || (value === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

export const get = (local: number) => [LOCAL_GET, local];
export const set = (local: number) => [LOCAL_SET, local];
export const tee = (local: number) => [LOCAL_TEE, local];
export const i32 = (value: number) => [I32_CONST, ...sleb(value)];
export const simd = (opcode: number, ...immediates: number[]) => [SIMD, ...leb(opcode), ...immediates];
/**
 * A memory access's immediates: alignment hint 2^0 (rows of d mod 4 ≠ 0 dimensions start anywhere;
 * the hint only promises, it never changes the result) and a constant offset.
 */
export const at = (offset: number) => [0, ...leb(offset)];
export const zeroV128 = () => simd(V128_CONST, ...new Array<number>(16).fill(0));
/** `local += step`. */
export const advance = (local: number, step: number) => [...get(local), ...i32(step), I32_ADD, ...set(local)];
/** A loop that runs `body` while `pointer < end` (both i32 locals). */
export const whileBelow = (pointer: number, end: number, body: number[]) => [
  BLOCK, EMPTY_BLOCK, LOOP, EMPTY_BLOCK,
  ...get(pointer), ...get(end), I32_GE_U, BR_IF, 1,
  ...body,
  BR, 0, END, END,
];
/** Adds the lanes of the v128 in `local` with `add`, after reading each with `extract`. */
export const laneSum = (local: number, extract: number, add: number) => [
  ...get(local), ...simd(extract, 0),
  ...[1, 2, 3].flatMap((lane) => [...get(local), ...simd(extract, lane), add]),
];

export function functionBody(locals: number[][], body: number[]): number[] {
  const code = [...leb(locals.length), ...locals.flatMap(([count, type]) => [...leb(count!), type!]), ...body, END];
  return [...leb(code.length), ...code];
}

export const vector = (items: number[][]) => [...leb(items.length), ...items.flat()];
export const name = (text: string) => [...leb(text.length), ...Array.from(text, (char) => char.charCodeAt(0))];
export const section = (id: number, content: number[]) => [id, ...leb(content.length), ...content];
