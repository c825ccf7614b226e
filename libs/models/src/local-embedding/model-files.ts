import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What a sentence-embedding model directory holds, checked before anything is loaded. */
export interface ModelFiles {
  readonly dir: string;
  /** onnx/model.onnx (or model.onnx); absent until a safetensors checkpoint is converted. */
  readonly onnxPath: string;
  readonly hasOnnx: boolean;
  readonly dimensions: number;
  readonly pooling: 'mean' | 'cls';
  /** The sentence-transformers max_seq_length, 0 when unknown. */
  readonly maxSequenceLength: number;
  readonly tokenizerConfig: Record<string, unknown>;
}

/**
 * Reads and validates a Hugging Face sentence-transformers directory: `config.json`,
 * `tokenizer.json`, optional `tokenizer_config.json`, `1_Pooling/config.json` and
 * `sentence_bert_config.json`, and either `onnx/model.onnx` or `model.safetensors`. Every
 * problem is reported with the file it concerns, so a broken directory fails start-up with
 * a message that says what to fix.
 */
export function readModelFiles(dir: string): ModelFiles {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`embedding model directory ${dir} does not exist`);
  const json = (name: string, required: boolean): Record<string, unknown> | null => {
    const path = join(dir, name);
    if (!existsSync(path)) {
      if (required) throw new Error(`embedding model directory ${dir} has no ${name}`);
      return null;
    }
    try {
      return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    } catch {
      throw new Error(`${path} is not valid JSON (corrupt download?)`);
    }
  };
  const config = json('config.json', true)!;
  json('tokenizer.json', true);
  const pooling = json('1_Pooling/config.json', false);
  const sentenceConfig = json('sentence_bert_config.json', false);
  const dimensions = Number(pooling?.word_embedding_dimension ?? config.hidden_size);
  if (!Number.isInteger(dimensions) || dimensions <= 0) throw new Error(`${dir}/config.json has no hidden_size`);
  const onnxCandidates = [join(dir, 'onnx', 'model.onnx'), join(dir, 'model.onnx')];
  const onnxPath = onnxCandidates.find((p) => existsSync(p)) ?? onnxCandidates[0]!;
  const hasOnnx = existsSync(onnxPath);
  if (!hasOnnx && !existsSync(join(dir, 'model.safetensors'))) {
    throw new Error(`embedding model directory ${dir} has neither onnx/model.onnx nor model.safetensors`);
  }
  return {
    dir,
    onnxPath,
    hasOnnx,
    dimensions,
    pooling: pooling?.pooling_mode_cls_token === true ? 'cls' : 'mean',
    maxSequenceLength: Number(sentenceConfig?.max_seq_length ?? 0) || 0,
    tokenizerConfig: json('tokenizer_config.json', false) ?? {},
  };
}
