// npm run bench:standalone [-- --corpus DIR] [--embeddings local,hash] [--uploads 4] [--cpu-prof DIR] — standalone ingest
// throughput and query latency. For each embedder (default: the local model, then hash, side
// by side in one run) starts the built server on free ports with a fresh data directory,
// ingests a corpus in the shared datasets format over gRPC while probing /healthz every 100 ms
// (indexing must not stall the server), waits for the graph (reporting the server's CPU time per
// chunk), then times Retrieve and Ask.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { chunksOf, loadAverage, machine, option, percentile, readJsonl, startBuiltServer, untilGraphed, uploadPassages } from './bench-kit.mjs';
import { treeCpuSeconds } from './process-cpu.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const { TrellisClient } = require('@trellis/client');

const corpusDir = resolve(option('corpus', join(root, '../shared/datasets/hotpotqa-100')));
const passages = readJsonl(corpusDir, 'corpus.jsonl');
const questions = readJsonl(corpusDir, 'questions.jsonl');

const ms = (n) => `${n.toFixed(1)} ms`;

// --cpu-prof DIR writes the server's V8 CPU profile there when it stops (open it in Chrome DevTools).
const profileDir = option('cpu-prof', undefined);
// --data-dir keeps the indexed corpus between runs (ingestion is skipped when already done).
const keptDir = option('data-dir', undefined);
const embedders = option('embeddings', 'local,hash').split(',').filter(Boolean);
// --uploads N: documents uploaded at the same time (default 4, as `trellis ingest`).
const uploadsAtOnce = Number(option('uploads', '4'));
const load = loadAverage;
console.log(`machine: ${machine()}`);
console.log(`corpus: ${corpusDir} (${passages.length} passages, ${questions.length} questions)`);
for (const embeddings of embedders) await benchOnce(embeddings);

async function benchOnce(embeddings) {
  const dataDir = keptDir ? resolve(keptDir, embeddings) : mkdtempSync(join(tmpdir(), 'trellis-bench-'));
  const started = await startBuiltServer({ checkout: root, dataDir, embeddings, nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${resolve(profileDir)}`] : [] });
  const { process: server, bootMs, httpUrl } = started;
  const client = new TrellisClient({ address: started.grpcAddress, timeoutMs: 120_000 });

  try {
    const existing = (await client.listKnowledgeBases()).knowledgeBases.some((k) => k.name === 'bench');
    if (!existing) await client.createKnowledgeBase({ name: 'bench' });
    const loadBeforeIngest = load();
    const cpuBefore = treeCpuSeconds(server.pid);
    const ingestStart = performance.now();
    const health = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const t = performance.now();
        await fetch(`${httpUrl}/healthz`).catch(() => undefined);
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    // As `trellis ingest` uploads: a few at a time (one at a time, the client set the pace).
    const ids = await uploadPassages(client, 'bench', existing ? [] : passages, uploadsAtOnce);
    const uploadMs = performance.now() - ingestStart;
    await untilGraphed(client, 'bench', ids);
    const ingestMs = performance.now() - ingestStart;
    const chunks = chunksOf(await client.listAllDocuments('bench'));
    const ingestCpuMs = (treeCpuSeconds(server.pid) - cpuBefore) * 1000;
    probing = false;
    await prober;
    const loadAfterIngest = load();
    const graph = await client.exportGraph('bench');

    const timeCalls = async (call) => {
      const times = [];
      for (const q of questions) {
        const t = performance.now();
        await call(q.question);
        times.push(performance.now() - t);
      }
      return times;
    };
    await client.retrieve({ knowledgeBase: 'bench', query: 'warm up' });
    const retrieve = await timeCalls((q) => client.retrieve({ knowledgeBase: 'bench', query: q, topK: 5 }));
    const ask = await timeCalls((q) => client.ask({ knowledgeBase: 'bench', question: q, topK: 5 }));
    const rss = await fetch(`${httpUrl}/metrics`).then((r) => r.text()).then((t) => Number(/trellis_process_resident_memory_bytes(?:\{[^}]*\})? (\d+)/.exec(t)?.[1] ?? 0));

    const kb = await client.getKnowledgeBase('bench');
    console.log(`\n== embeddings: ${kb.serverEmbedding?.model ?? embeddings} (TRELLIS_EMBEDDINGS=${embeddings})`);
    console.log(`server boot to /healthz:      ${ms(bootMs)}`);
    console.log(`upload of ${passages.length} documents:   ${(uploadMs / 1000).toFixed(1)} s (${uploadsAtOnce} at a time)`);
    console.log(`ingest to graphed:           ${(ingestMs / 1000).toFixed(1)} s — ${chunks} chunks, ${(chunks / (ingestMs / 1000)).toFixed(1)} chunks/s (load average before: ${loadBeforeIngest}, after: ${loadAfterIngest})`);
    console.log(`ingest CPU (server process):  ${(ingestCpuMs / 1000).toFixed(1)} s, ${chunks > 0 ? (ingestCpuMs / chunks).toFixed(1) : 'n/a'} ms per chunk`);
    if (health.length > 0) console.log(`/healthz during ingest:      p50 ${ms(percentile(health, 50))}, p99 ${ms(percentile(health, 99))}, max ${ms(Math.max(...health))} (${health.length} probes)`);
    console.log(`graph:                       ${graph.entities.length} entities, ${graph.relationships.length} relationships`);
    console.log(`Retrieve (hybrid, k=5):      p50 ${ms(percentile(retrieve, 50))}, p95 ${ms(percentile(retrieve, 95))}`);
    console.log(`Ask (extractive, k=5):       p50 ${ms(percentile(ask, 50))}, p95 ${ms(percentile(ask, 95))}`);
    console.log(`server RSS after the run:    ${Math.round(rss / 2 ** 20)} MB (load average: ${load()})`);
  } finally {
    client.close();
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
  }
}
