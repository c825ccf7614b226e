import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Tokenizer as TokenizerType } from '@huggingface/tokenizers' with { 'resolution-mode': 'import' };
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import type { ModelFiles } from './model-files';

type Ort = typeof import('onnxruntime-node');
// The package is ESM-first but ships a CommonJS build, which this CommonJS module loads.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tokenizer } = require('@huggingface/tokenizers') as { Tokenizer: typeof TokenizerType };

/** Longest window the encoder sees at once, in model tokens ([CLS] and [SEP] included). */
const DEFAULT_WINDOW = 256;
/**
 * Windows embedded per text: a default-sized chunk (512 tiktoken tokens) needs three. Beyond
 * that a text is an ever-growing entity summary, whose opening says what it is about.
 */
const MAX_WINDOWS = 4;
/** Texts per ONNX run at most: big enough to use both cores. */
const BATCH = 16;
/**
 * Padded tokens per ONNX run at most (rows × longest row): eight full windows. ONNX Runtime's
 * arena keeps the memory of the largest run it has made, and a run's attention scores grow with
 * rows × length²: sixteen full windows left 130 MB in the embedding worker after an ingest of
 * long passages, eight 22 MB, at the same speed (docs/benchmarks.md, session 32). Short texts
 * (entity headings, questions) still run sixteen at a time.
 */
const BATCH_TOKENS = 8 * DEFAULT_WINDOW;
/**
 * Longest window of a batch, at most this many times its shortest. Every row of a batch is
 * padded to its longest: an entity heading of 7 tokens run beside a sentence of 40 cost as much
 * as the sentence. A graph write's texts are both kinds; split by length, the same texts took
 * half the CPU.
 */
const MAX_LENGTH_RATIO = 1.5;

/**
 * A sentence-embedding model run with ONNX Runtime: the model's own tokenizer, the encoder,
 * then the pooling its sentence-transformers config names (mean or [CLS]) and L2
 * normalisation. A text longer than the window is embedded window by window and the windows
 * averaged by length, so the end of a long chunk counts as much as its start. Runs wherever
 * it is created; the embedder keeps it on a worker thread.
 */
export class SentenceEncoder {
  private constructor(
    private readonly ort: Ort,
    private readonly session: InferenceSession,
    private readonly tokenizer: TokenizerType,
    private readonly files: ModelFiles,
    private readonly window: number,
    private readonly specialTokens: { readonly cls: number; readonly sep: number },
  ) {}

  static async load(ort: Ort, files: ModelFiles, threads: number): Promise<SentenceEncoder> {
    const tokenizer = new Tokenizer(
      JSON.parse(readFileSync(join(files.dir, 'tokenizer.json'), 'utf8')),
      files.tokenizerConfig,
    );
    const session = await ort.InferenceSession.create(files.onnxPath, {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      // ONNX Runtime's intra-op threads spin on a core between runs by default. Here they share
      // the cores with the event loop, the extractor and SQLite, which the spinning starved:
      // with it off, an ingest with this model took 25 % less CPU per chunk and ran 25 % faster.
      extra: { session: { intra_op: { allow_spinning: '0' } } },
    });
    const window = Math.min(files.maxSequenceLength || DEFAULT_WINDOW, DEFAULT_WINDOW);
    // What the tokenizer wraps every input in ([CLS] … [SEP] for BERT): each window gets both.
    const wrapped = tokenizer.encode('').ids;
    if (wrapped.length !== 2) throw new Error(`${files.dir}/tokenizer.json adds ${wrapped.length} special tokens to a text; expected a start and an end token`);
    return new SentenceEncoder(ort, session, tokenizer, files, window, { cls: wrapped[0]!, sep: wrapped[1]! });
  }

  /** Frees the ONNX session; the encoder must not be used after. */
  async release(): Promise<void> {
    await this.session.release();
  }

  get dimensions(): number {
    return this.files.dimensions;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const windows: Array<{ text: number; ids: number[] }> = [];
    texts.forEach((text, index) => {
      for (const ids of this.windowsOf(text)) windows.push({ text: index, ids });
    });
    const pooled = new Array<Float32Array>(windows.length);
    for (const batch of batchesByLength(windows.map((w) => w.ids.length), { maxRows: BATCH, maxTokens: BATCH_TOKENS, maxRatio: MAX_LENGTH_RATIO })) {
      const vectors = await this.run(batch.map((i) => windows[i]!.ids));
      batch.forEach((windowIndex, j) => (pooled[windowIndex] = vectors[j]!));
    }
    const out = texts.map(() => new Float32Array(this.dimensions));
    windows.forEach((w, i) => {
      const weight = w.ids.length;
      const target = out[w.text]!;
      const vector = pooled[i]!;
      for (let d = 0; d < target.length; d++) target[d]! += vector[d]! * weight;
    });
    for (const vector of out) normalize(vector);
    return out;
  }

  private windowsOf(text: string): number[][] {
    const { ids } = this.tokenizer.encode(text, { add_special_tokens: false });
    const { cls, sep } = this.specialTokens;
    const body = this.window - 2;
    if (ids.length === 0) return [[cls, sep]];
    const windows: number[][] = [];
    for (let start = 0; start < ids.length && windows.length < MAX_WINDOWS; start += body) windows.push([cls, ...ids.slice(start, start + body), sep]);
    return windows;
  }

  private async run(batch: readonly number[][]): Promise<Float32Array[]> {
    const rows = batch.length;
    const length = Math.max(...batch.map((ids) => ids.length));
    const inputIds = new BigInt64Array(rows * length);
    const mask = new BigInt64Array(rows * length);
    batch.forEach((ids, r) =>
      ids.forEach((id, i) => {
        inputIds[r * length + i] = BigInt(id);
        mask[r * length + i] = 1n;
      }),
    );
    const shape = [rows, length];
    const feeds: Record<string, Tensor> = {
      input_ids: new this.ort.Tensor('int64', inputIds, shape),
      attention_mask: new this.ort.Tensor('int64', mask, shape),
    };
    if (this.session.inputNames.includes('token_type_ids')) {
      feeds.token_type_ids = new this.ort.Tensor('int64', new BigInt64Array(rows * length), shape);
    }
    const result = await this.session.run(feeds);
    const hidden = (result.last_hidden_state ?? result[this.session.outputNames[0]!])!;
    const states = hidden.data as Float32Array;
    const width = hidden.dims[2]!;
    if (width !== this.dimensions) throw new Error(`the model returned ${width}-dimensional states, its config says ${this.dimensions}`);
    return batch.map((ids, r) => {
      const vector = new Float32Array(width);
      if (this.files.pooling === 'cls') {
        vector.set(states.subarray(r * length * width, r * length * width + width));
      } else {
        for (let i = 0; i < ids.length; i++) {
          const offset = (r * length + i) * width;
          for (let d = 0; d < width; d++) vector[d]! += states[offset + d]!;
        }
        for (let d = 0; d < width; d++) vector[d]! /= ids.length;
      }
      return normalize(vector);
    });
  }
}

export interface BatchLimits {
  /** Rows a batch holds at most. */
  readonly maxRows: number;
  /** Padded tokens a batch holds at most: its rows times its longest row (a longer row alone still makes a batch). */
  readonly maxTokens: number;
  /** How many times its shortest row a batch's longest may be. */
  readonly maxRatio: number;
}

/**
 * The indices of `lengths` in batches for one ONNX run each: shortest first, at most `maxRows`
 * a batch and `maxTokens` once every row is padded to the longest, and a new batch wherever a
 * length passes `maxRatio` times the batch's shortest, so no row is padded to more than
 * `maxRatio` times its own length.
 */
export function batchesByLength(lengths: readonly number[], { maxRows, maxTokens, maxRatio }: BatchLimits): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]!);
  const batches: number[][] = [];
  let batch: number[] = [];
  for (const i of order) {
    // Sorted shortest first: the row coming in is the longest the batch would hold.
    const full = batch.length === maxRows || (batch.length + 1) * lengths[i]! > maxTokens;
    if (batch.length > 0 && (full || lengths[i]! > lengths[batch[0]!]! * maxRatio)) {
      batches.push(batch);
      batch = [];
    }
    batch.push(i);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

function normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (const v of vector) norm += v * v;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let d = 0; d < vector.length; d++) vector[d]! /= norm;
  return vector;
}
