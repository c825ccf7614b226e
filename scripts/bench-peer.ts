// npm run bench:peer [-- --passages 300] [--questions 50] [--latency-ms 200] [--concurrency 8]
//   [--query-latency-ms 0] [--uploads 4] [--corpus DIR] [--trellis-only] — LightRAG (lightrag-hku from PyPI, pinned) and
// Trellis standalone side by side: the same passages, the same fake OpenAI-compatible model
// (a real HTTP server answering each system's extraction prompt in the format it expects,
// after a fixed latency, and serving deterministic embeddings to both), the same number of
// concurrent LLM calls, one extraction call per chunk (LightRAG's gleaning off, Trellis's
// gleaning passes 0). Prints ingest wall and CPU time (each system's process tree), LLM calls
// per chunk by purpose, hybrid retrieval latency for the same questions, and the ratios, with
// the load average beside each figure. Exits non-zero when LightRAG cannot be installed or a
// system builds an empty graph.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PeerLlm, startServerOnPeerLlm } from './bench-peer-llm';
import type { CallCounts } from './bench-peer-llm';
import { LIGHTRAG_VERSION, LightRagDriver, ensureLightRag } from './bench-peer-lightrag';
import { chunksOf, loadAverage, machine, option, percentile, readJsonl, runBench, untilGraphed, uploadPassages } from './bench-kit.mjs';
import { treeCpuSeconds } from './process-cpu.mjs';

const root = resolve(__dirname, '..');
const count = (name: string, fallback: number) => {
  const n = Number(option(name, String(fallback)));
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} takes a whole number, not ${option(name, '')}`);
  return n;
};

const corpusDir = resolve(option('corpus', join(root, '../shared/datasets/hotpotqa-100')));
const passageLimit = Math.max(1, count('passages', 300));
const questionLimit = count('questions', 50);
const latencyMs = count('latency-ms', 200);
const queryLatencyMs = count('query-latency-ms', 0);
const concurrency = count('concurrency', 8);
// Trellis's UploadDocument calls in flight at once; 4 is what `trellis ingest` does.
const uploads = Math.max(1, count('uploads', 4));
const dimensions = 64;
// Trellis alone, without installing or running LightRAG (its overhead over the LLM floor at a given latency).
const trellisOnly = process.argv.includes('--trellis-only');

type Passage = { id: string; title: string; text: string };
const passages = (readJsonl(corpusDir, 'corpus.jsonl') as Passage[]).slice(0, passageLimit);
const questions = (readJsonl(corpusDir, 'questions.jsonl') as Array<{ question: string }>).slice(0, questionLimit).map((q) => q.question);


/** What one system did, as the bench measured it. */
interface SystemRun {
  name: string;
  chunks: number;
  entities: number;
  relationships: number;
  ingestSeconds: number;
  /** When the last document had been handed over (Trellis uploads one RPC per passage). */
  handedOverSeconds?: number;
  ingestCpuSeconds: number;
  ingestLoad: string;
  ingestCalls: CallCounts;
  queryMs: number[];
  queryLoad: string;
  queryCalls: CallCounts;
}

function requireGraph(run: Omit<SystemRun, 'queryMs' | 'queryLoad' | 'queryCalls'>): void {
  if (run.chunks === 0 || run.entities === 0 || run.relationships === 0) {
    throw new Error(`${run.name} built an empty graph (${run.chunks} chunks, ${run.entities} entities, ${run.relationships} relationships): the comparison would mean nothing`);
  }
}

async function benchLightRag(llm: PeerLlm, python: string, scratch: string): Promise<SystemRun> {
  const corpusFile = join(scratch, 'corpus.jsonl');
  const questionsFile = join(scratch, 'questions.jsonl');
  writeFileSync(corpusFile, passages.map((p) => JSON.stringify(p)).join('\n') + '\n');
  writeFileSync(questionsFile, questions.map((question) => JSON.stringify({ question })).join('\n') + '\n');
  const driver = await LightRagDriver.start({ python, baseUrl: llm.baseUrl, corpusFile, questionsFile, workDir: scratch, maxAsync: concurrency, parallelInsert: concurrency, dimensions });
  try {
    llm.latencyMs = latencyMs;
    llm.snapshot();
    const cpuBefore = treeCpuSeconds(driver.pid);
    const started = performance.now();
    const ingest = await driver.send<{ documents: Record<string, number>; chunks: number; entities: number; relationships: number }>('ingest');
    const ingestSeconds = (performance.now() - started) / 1000;
    const ingestCpuSeconds = treeCpuSeconds(driver.pid) - cpuBefore;
    const ingestCalls = llm.snapshot();
    const ingestLoad = loadAverage();
    const processed = ingest.documents.processed ?? 0;
    if (processed !== passages.length) throw new Error(`LightRAG processed ${processed} of ${passages.length} passages (statuses ${JSON.stringify(ingest.documents)})`);
    const run = { name: `LightRAG ${LIGHTRAG_VERSION}`, chunks: ingest.chunks, entities: ingest.entities, relationships: ingest.relationships, ingestSeconds, ingestCpuSeconds, ingestLoad, ingestCalls };
    requireGraph(run);
    llm.latencyMs = queryLatencyMs;
    await driver.send('warmup');
    llm.snapshot();
    const query = await driver.send<{ latenciesMs: number[]; emptyContexts: number }>('query');
    if (query.emptyContexts === questions.length) throw new Error('LightRAG retrieved no context for any question');
    return { ...run, queryMs: query.latenciesMs, queryLoad: loadAverage(), queryCalls: llm.snapshot() };
  } finally {
    await driver.quit();
  }
}

async function benchTrellis(llm: PeerLlm, scratch: string): Promise<SystemRun> {
  const server = await startServerOnPeerLlm(root, llm, join(scratch, 'data'), { TRELLIS_LLM_MAX_CONCURRENCY: String(concurrency) });
  const client = server.client;
  try {
    await client.createKnowledgeBase({ name: 'peer', extraction: { entityTypes: [], instructions: '', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    llm.latencyMs = latencyMs;
    llm.snapshot();
    const cpuBefore = treeCpuSeconds(server.process.pid!);
    const started = performance.now();
    const ids = await uploadPassages(client, 'peer', passages, uploads);
    const handedOverSeconds = (performance.now() - started) / 1000;
    const documents = await untilGraphed(client, 'peer', ids, 100);
    const ingestSeconds = (performance.now() - started) / 1000;
    const ingestCpuSeconds = treeCpuSeconds(server.process.pid!) - cpuBefore;
    const ingestCalls = llm.snapshot();
    const ingestLoad = loadAverage();
    const failed = documents.filter((d) => d.status === 'INDEX_STATUS_FAILED').length;
    if (failed > 0 || documents.length !== passages.length) throw new Error(`Trellis graphed ${documents.length - failed} of ${passages.length} passages (${failed} failed)`);
    const graph = await client.exportGraph('peer');
    const chunks = chunksOf(documents);
    const run = { name: 'Trellis standalone', chunks, entities: graph.entities.length, relationships: graph.relationships.length, ingestSeconds, handedOverSeconds, ingestCpuSeconds, ingestLoad, ingestCalls };
    requireGraph(run);
    llm.latencyMs = queryLatencyMs;
    await client.retrieve({ knowledgeBase: 'peer', query: 'warm up' });
    llm.snapshot();
    const queryMs: number[] = [];
    let empty = 0;
    for (const question of questions) {
      const t = performance.now();
      const result = await client.retrieve({ knowledgeBase: 'peer', query: question, topK: 5 });
      queryMs.push(performance.now() - t);
      if (result.chunks.length === 0) empty += 1;
    }
    if (empty === questions.length) throw new Error('Trellis retrieved nothing for any question');
    return { ...run, queryMs, queryLoad: loadAverage(), queryCalls: llm.snapshot() };
  } finally {
    await server.stop();
  }
}

/** The results table: one column per system and, with both, Trellis's ratios to LightRAG. */
function report(trellis: SystemRun, lightrag?: SystemRun): void {
  const per = (n: number, run: SystemRun) => (n / run.chunks).toFixed(2);
  const callsLine = (run: SystemRun) =>
    Object.entries(run.ingestCalls.chat)
      .filter(([, n]) => n > 0)
      .map(([purpose, n]) => `${purpose.replace(/^\S+ /, '')} ${n}`)
      .join(', ');
  const extraction = (run: SystemRun) => run.ingestCalls.chat['trellis extraction'] + run.ingestCalls.chat['trellis gleaning'] + run.ingestCalls.chat['lightrag extraction'];
  const floor = (run: SystemRun) => (run.ingestCalls.chatTotal * latencyMs) / 1000 / concurrency;
  const throughput = (run: SystemRun) => run.chunks / run.ingestSeconds;
  const ratio = (n: number) => `${n.toFixed(1)}×`;
  type Row = [label: string, cell: (run: SystemRun) => string, versus?: (l: SystemRun, t: SystemRun) => string];
  const rows: Row[] = [
    ['chunks (from passages)', (r) => `${r.chunks}`],
    ['graph: entities / relationships', (r) => `${r.entities} / ${r.relationships}`],
    ['LLM calls while indexing', (r) => `${r.ingestCalls.chatTotal} (${callsLine(r)})`],
    ['extraction calls per chunk', (r) => per(extraction(r), r)],
    ['all LLM calls per chunk', (r) => per(r.ingestCalls.chatTotal, r)],
    ['most LLM calls in flight', (r) => `${r.ingestCalls.maxInFlight}`],
    ['embedding requests (texts)', (r) => `${r.ingestCalls.embeddingRequests} (${r.ingestCalls.embeddedTexts})`],
    ['LLM floor: calls × latency ÷ concurrency', (r) => `${floor(r).toFixed(1)} s`],
    ['ingest wall time', (r) => `${r.ingestSeconds.toFixed(1)} s (load ${r.ingestLoad})`, (l, t) => `${ratio(l.ingestSeconds / t.ingestSeconds)} faster`],
    ['wall time ÷ LLM floor', (r) => `${(r.ingestSeconds / floor(r)).toFixed(2)} (target ≤ 1.10)`],
    ['of which handing the documents over', (r) => (r.handedOverSeconds === undefined ? 'one ainsert() call' : `${r.handedOverSeconds.toFixed(1)} s (${passages.length} UploadDocument calls, ${uploads === 1 ? 'one at a time' : `${uploads} at a time`})`)],
    ['ingest throughput', (r) => `${throughput(r).toFixed(2)} chunks/s`, (l, t) => `${ratio(throughput(t) / throughput(l))} (target ≥ 20×)`],
    ['ingest CPU (process tree)', (r) => `${r.ingestCpuSeconds.toFixed(1)} s`, (l, t) => `${ratio(l.ingestCpuSeconds / t.ingestCpuSeconds)} less`],
    ['CPU per chunk', (r) => `${((r.ingestCpuSeconds / r.chunks) * 1000).toFixed(1)} ms`],
    [`hybrid retrieval p50 / p95 (${questions.length} questions)`, (r) => `${percentile(r.queryMs, 50).toFixed(1)} / ${percentile(r.queryMs, 95).toFixed(1)} ms (load ${r.queryLoad})`, (l, t) => `${ratio(percentile(l.queryMs, 50) / percentile(t.queryMs, 50))} faster at p50`],
    ['LLM calls per query', (r) => (r.queryCalls.chatTotal / questions.length).toFixed(2)],
  ];
  const runs = lightrag ? [lightrag, trellis] : [trellis];
  const table = [['', ...runs.map((r) => r.name), ...(lightrag ? ['Trellis vs LightRAG'] : [])], ...rows.map(([label, cell, versus]) => [label, ...runs.map(cell), ...(lightrag ? [versus ? versus(lightrag, trellis) : ''] : [])])];
  console.log(`\nmachine: ${machine()}; ${new Date().toISOString()}`);
  console.log(`corpus: ${corpusDir}, first ${passages.length} passages; fake LLM latency ${latencyMs} ms while indexing, ${queryLatencyMs} ms while querying; concurrency ${concurrency}`);
  console.log(table.map((r) => `| ${r.join(' | ')} |`).join('\n').replace(/\n/, `\n|${' --- |'.repeat(table[0]!.length)}\n`));
}

async function main(): Promise<void> {
  const python = trellisOnly ? '' : ensureLightRag();
  const llm = new PeerLlm(dimensions);
  await llm.start();
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-bench-peer-'));
  try {
    console.log(`indexing ${passages.length} passages with Trellis… (load ${loadAverage()})`);
    const trellis = await benchTrellis(llm, mkdirIn(scratch, 'trellis'));
    if (trellisOnly) return report(trellis);
    console.log(`Trellis: ${trellis.ingestSeconds.toFixed(1)} s (load ${trellis.ingestLoad}); indexing with LightRAG ${LIGHTRAG_VERSION}…`);
    const lightrag = await benchLightRag(llm, python, mkdirIn(scratch, 'lightrag'));
    report(trellis, lightrag);
  } finally {
    await llm.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

function mkdirIn(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

runBench(main, (error: unknown) => `bench:peer failed: ${error instanceof Error ? error.message : String(error)}`);
