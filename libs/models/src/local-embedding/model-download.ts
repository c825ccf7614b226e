import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The files a sentence-transformers model repository holds that Trellis needs (optional ones may 404). */
const MODEL_FILES: ReadonlyArray<{ path: string; required: boolean }> = [
  { path: 'config.json', required: true },
  { path: 'tokenizer.json', required: true },
  { path: 'tokenizer_config.json', required: false },
  { path: 'special_tokens_map.json', required: false },
  { path: 'modules.json', required: false },
  { path: 'sentence_bert_config.json', required: false },
  { path: '1_Pooling/config.json', required: false },
  { path: 'onnx/model.onnx', required: true },
];

/** `all-MiniLM-L6-v2` is short for the sentence-transformers repository of that name. */
export function hubRepository(model: string): string {
  return model.includes('/') ? model : `sentence-transformers/${model}`;
}

/**
 * Downloads a model's tokenizer, configuration and ONNX weights from a Hugging Face-style hub
 * into `target`, announcing each file and its progress through `log`. Files land in a
 * temporary directory that is renamed into place only when all arrived, so an interrupted
 * download never leaves a half model behind.
 */
export async function downloadModel(hubUrl: string, model: string, target: string, log: (line: string) => void, timeoutMs = 30_000): Promise<void> {
  const repo = hubRepository(model);
  const partial = `${target}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  try {
    for (const file of MODEL_FILES) {
      const url = `${hubUrl.replace(/\/$/, '')}/${repo}/resolve/main/${file.path}`;
      const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' });
      if (response.status === 404 && !file.required) continue;
      if (!response.ok || response.body === null) throw new Error(`GET ${url} answered ${response.status}`);
      const size = Number(response.headers.get('content-length') ?? 0);
      const path = join(partial, file.path);
      mkdirSync(dirname(path), { recursive: true });
      let received = 0;
      let announced = 0;
      const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
      body.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (size > 10_000_000 && received - announced >= size / 10) {
          announced = received;
          log(`  ${file.path}: ${Math.round((received / size) * 100)}% of ${(size / 1e6).toFixed(0)} MB`);
        }
      });
      await pipeline(body, createWriteStream(path));
      log(`  ${file.path} (${(received / 1e6).toFixed(1)} MB)`);
    }
    if (existsSync(target)) rmSync(target, { recursive: true, force: true });
    mkdirSync(dirname(target), { recursive: true });
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    throw error;
  }
}
