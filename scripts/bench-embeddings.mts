// npm run bench:embeddings — the local embedding model on its own: exports all-MiniLM-L6-v2
// (from the model cache, `npm run models`) as float and as int8 ONNX, embeds the hotpotqa-100
// passages and questions straight through the encoder, and prints vector-only recall and
// throughput for both, with the load average beside each figure.
import { mkdtempSync, readFileSync } from 'node:fs';
import { homedir, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { exportBertToOnnx } from '../libs/models/src/local-embedding/bert-onnx-export';
import { readModelFiles } from '../libs/models/src/local-embedding/model-files';
import { SentenceEncoder } from '../libs/models/src/local-embedding/sentence-encoder';

const modelDir = join(process.env.TRELLIS_MODEL_CACHE_DIR ?? join(homedir(), '.cache', 'trellis', 'models'), 'all-MiniLM-L6-v2');
const dataset = join(import.meta.dirname, '../../shared/datasets/hotpotqa-100');
const readJsonl = <T>(file: string): T[] => readFileSync(join(dataset, file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as T);
const corpus = readJsonl<{ id: string; title: string; text: string }>('corpus.jsonl');
const questions = readJsonl<{ question: string; gold: string[] }>('questions.jsonl');
const out = mkdtempSync(join(tmpdir(), 'trellis-bench-embeddings-'));
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

async function main(): Promise<void> {
  const vectors: Float32Array[][] = [];
  for (const quantize of [false, true]) {
    const onnxPath = exportBertToOnnx(modelDir, join(out, quantize ? 'int8.onnx' : 'float.onnx'), { quantize });
    const encoder = await SentenceEncoder.load(ort, { ...readModelFiles(modelDir), onnxPath, hasOnnx: true }, 2);
    const started = performance.now();
    const passages = await encoder.embed(corpus.map((p) => `${p.title}\n${p.text}`));
    const seconds = (performance.now() - started) / 1000;
    const load = loadavg()[0]!.toFixed(2);
    const asked = await encoder.embed(questions.map((q) => q.question));
    let r2 = 0;
    let r5 = 0;
    questions.forEach((q, i) => {
      const ranked = passages.map((v, j) => [j, dot(v, asked[i]!)] as const).sort((a, b) => b[1] - a[1]).map(([j]) => corpus[j]!.id);
      r2 += q.gold.filter((g) => ranked.slice(0, 2).includes(g)).length / q.gold.length;
      r5 += q.gold.filter((g) => ranked.slice(0, 5).includes(g)).length / q.gold.length;
    });
    const n = questions.length;
    console.log(`${quantize ? 'int8   ' : 'float32'}  R@2 ${((100 * r2) / n).toFixed(1)}  R@5 ${((100 * r5) / n).toFixed(1)}  ${corpus.length} passages in ${seconds.toFixed(1)} s (${(corpus.length / seconds).toFixed(0)}/s, load ${load})`);
    vectors.push(passages);
  }
  const agreement = vectors[0]!.reduce((sum, v, i) => sum + dot(v, vectors[1]![i]!), 0) / corpus.length;
  console.log(`mean cosine float32 vs int8: ${agreement.toFixed(4)}`);
}

void main();
