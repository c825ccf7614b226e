// npm run bench:http [-- --corpus DIR] [--embeddings hash|local] [--rounds N] — the latency the
// HTTP API adds over gRPC. Starts the built standalone server on free ports with a fresh data
// directory, ingests a corpus in the shared datasets format over gRPC, then for each question
// makes the same Retrieve and Ask call over gRPC (TrellisClient), over REST (/api/v1) and,
// for Ask, over the OpenAI-compatible endpoint (/v1/chat/completions, not streamed), in a
// rotating order so neither transport always runs first. Prints p50/p95 per path, the
// overhead over gRPC, and the load average before and after (the machine is shared).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { freePort, loadAverage, machine, option, percentile, readJsonl } from './bench-kit.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const { TrellisClient } = require('@trellis/client');

const shared = join(root, '../shared/datasets/hotpotqa-100');
const corpusDir = resolve(option('corpus', existsSync(shared) ? shared : join(root, 'datasets/drill-corpus')));
const passages = readJsonl(corpusDir, 'corpus.jsonl');
const questions = existsSync(join(corpusDir, 'questions.jsonl')) ? readJsonl(corpusDir, 'questions.jsonl').map((q) => q.question) : passages.slice(0, 50).map((p) => `What is ${p.title}?`);
const embeddings = option('embeddings', 'hash');
const rounds = Number(option('rounds', '1'));

const load = loadAverage;

console.log(`machine: ${machine()}, ${new Date().toISOString()}`);
console.log(`corpus: ${corpusDir} (${passages.length} passages, ${questions.length} questions × ${rounds} round(s)), TRELLIS_EMBEDDINGS=${embeddings}`);

const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bench-http-'));
const [grpcPort, httpPort] = [await freePort(), await freePort()];
const server = spawn(process.execPath, [join(root, 'services/standalone/dist/main.js')], {
  cwd: root,
  env: { ...process.env, TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(grpcPort), TRELLIS_HTTP_PORT: String(httpPort), TRELLIS_LOG_LEVEL: 'warn', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', TRELLIS_EMBEDDINGS: embeddings },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${httpPort}`;
while (!(await fetch(`${base}/healthz`).then((r) => r.ok, () => false))) await new Promise((r) => setTimeout(r, 50));
// Shed calls are not retried inside the client: the loop below retries every path alike.
const client = new TrellisClient({ address: `127.0.0.1:${grpcPort}`, timeoutMs: 120_000, retryShed: false });
const ingest = new TrellisClient({ address: `127.0.0.1:${grpcPort}`, timeoutMs: 120_000 });

class Shed extends Error {}
const post = async (path, body) => {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status === 429) throw new Shed(await response.text());
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
};
const RESOURCE_EXHAUSTED = 8;
let shed = 0;
/** The time of the call's attempt that was served; a shed attempt waits 200 ms and is counted, not timed. */
async function timed(call) {
  for (;;) {
    const start = performance.now();
    try {
      await call();
      return performance.now() - start;
    } catch (error) {
      if (!(error instanceof Shed) && error?.code !== RESOURCE_EXHAUSTED) throw error;
      shed += 1;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

try {
  await ingest.createKnowledgeBase({ name: 'bench' });
  for (const p of passages) await ingest.uploadDocument({ knowledgeBase: 'bench', filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
  for (;;) {
    const { documents } = await ingest.listDocuments('bench');
    if (documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED' || d.status === 'INDEX_STATUS_FAILED')) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const calls = {
    'Retrieve  gRPC': (q) => client.retrieve({ knowledgeBase: 'bench', query: q, topK: 5 }),
    'Retrieve  REST': (q) => post('/api/v1/knowledge-bases/bench/retrieve', { query: q, topK: 5 }),
    'Ask       gRPC': (q) => client.ask({ knowledgeBase: 'bench', question: q, topK: 5 }),
    'Ask       REST': (q) => post('/api/v1/knowledge-bases/bench/ask', { question: q, topK: 5 }),
    'Ask       OpenAI /v1/chat/completions': (q) => post('/v1/chat/completions', { model: 'bench', messages: [{ role: 'user', content: q }] }),
  };
  const names = Object.keys(calls);
  const times = Object.fromEntries(names.map((n) => [n, []]));
  // Indexing leaves summary work behind: warm up until every path is served without shedding.
  for (let quiet = 0; quiet < 3; ) {
    shed = 0;
    for (const name of names) await timed(() => calls[name]('warm up'));
    quiet = shed === 0 ? quiet + 1 : 0;
  }
  shed = 0;
  const loadBefore = load();
  let turn = 0;
  for (let round = 0; round < rounds; round += 1) {
    for (const question of questions) {
      // Rotate which path goes first, so caches and GC pauses do not favour one of them.
      const order = names.map((_, i) => names[(i + turn) % names.length]);
      turn += 1;
      for (const name of order) {
        times[name].push(await timed(() => calls[name](question)));
      }
    }
  }
  const loadAfter = load();
  const p = (name, q) => percentile(times[name], q);
  console.log(`\nload average before: ${loadBefore}; after: ${loadAfter}`);
  console.log('path                                   p50 ms   p95 ms   overhead over gRPC p50 / p95');
  for (const name of names) {
    const grpc = name.startsWith('Retrieve') ? 'Retrieve  gRPC' : 'Ask       gRPC';
    const overhead = name === grpc ? '' : `${(p(name, 50) - p(grpc, 50)).toFixed(2)} / ${(p(name, 95) - p(grpc, 95)).toFixed(2)} ms`;
    console.log(`${name.padEnd(38)} ${p(name, 50).toFixed(2).padStart(7)}  ${p(name, 95).toFixed(2).padStart(7)}   ${overhead}`);
  }
  console.log(`(${times[names[0]].length} calls per path; ${shed} attempts shed with 429 / RESOURCE_EXHAUSTED and retried, not timed)`);
} finally {
  client.close();
  ingest.close();
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
