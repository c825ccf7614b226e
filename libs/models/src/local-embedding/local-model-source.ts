import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { EmbeddingSettings } from '@trellis/config';
import { exportBertToOnnx } from './bert-onnx-export';
import { downloadModel, hubRepository } from './model-download';
import { readModelFiles } from './model-files';
import type { ModelFiles } from './model-files';

/**
 * Finds the local embedding model's files, in this order: TRELLIS_EMBEDDING_MODEL_DIR; the
 * model cache (`<cache>/<name>`, filled by an earlier download or by `npm run models`); a
 * one-time download from the hub. A directory with only `model.safetensors` (the form
 * registry packages ship) is converted to ONNX once, into the cache, keyed by the weights'
 * hash. Throws with a message that says what to fix.
 */
export async function locateLocalModel(settings: EmbeddingSettings, log: (line: string) => void): Promise<ModelFiles> {
  const dir = settings.modelDir ?? join(settings.cacheDir, cacheName(settings.model));
  if (settings.modelDir === undefined && !existsSync(dir)) {
    if (!settings.download) {
      throw new Error(`embedding model ${settings.model} is not in ${dir} and TRELLIS_MODEL_DOWNLOAD=false`);
    }
    log(`downloading embedding model ${hubRepository(settings.model)} from ${settings.hubUrl} into ${dir} (once)`);
    try {
      await downloadModel(settings.hubUrl, settings.model, dir, log);
    } catch (error) {
      throw new Error(`embedding model ${settings.model} is not in ${dir} and could not be downloaded (${describe(error)})`);
    }
  }
  let files = readModelFiles(dir);
  if (!files.hasOnnx) {
    const weights = join(dir, 'model.safetensors');
    const variant = settings.quantize ? '-int8' : '';
    const onnxPath = join(settings.cacheDir, 'converted', `${cacheName(settings.model)}-${await weightsKey(weights)}${variant}.onnx`);
    if (!existsSync(onnxPath)) {
      log(`converting ${weights} to ONNX${settings.quantize ? ' (int8)' : ''} (once) into ${onnxPath}`);
      exportBertToOnnx(dir, onnxPath, { quantize: settings.quantize });
    }
    files = { ...files, onnxPath, hasOnnx: true };
  }
  if (settings.dimensions !== 0 && settings.dimensions !== files.dimensions) {
    throw new Error(
      `embedding model in ${dir} makes ${files.dimensions}-dimensional vectors but TRELLIS_EMBEDDING_DIMENSIONS is ${settings.dimensions}: fix one of them`,
    );
  }
  if (statSync(files.onnxPath).size < 1024) throw new Error(`${files.onnxPath} is too small to be a model (corrupt download?)`);
  return files;
}

/** `BAAI/bge-small-en-v1.5` → `BAAI--bge-small-en-v1.5`: one directory per model. */
export function cacheName(model: string): string {
  return model.replace(/[^A-Za-z0-9._-]+/g, '--');
}

/**
 * Names a conversion by the weights' content: a sha256 computed once and remembered beside the
 * conversions by path, size and modification time, so a start does not re-read 90 MB.
 */
async function weightsKey(path: string): Promise<string> {
  const { size, mtimeMs } = statSync(path);
  const memo = join(dirname(path), '.trellis-weights-sha256');
  const stamp = `${size}:${Math.floor(mtimeMs)}`;
  try {
    const [seen, digest] = readFileSync(memo, 'utf8').trim().split(' ');
    if (seen === stamp && digest) return digest;
  } catch {
    // Not remembered yet.
  }
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex').slice(0, 16);
  try {
    writeFileSync(memo, `${stamp} ${digest}\n`);
  } catch {
    // A read-only model directory: hashed again next start.
  }
  return digest;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? error.message;
  }
  return String(error);
}
