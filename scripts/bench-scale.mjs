// npm run bench:scale [-- --sizes 10000,100000] [--embeddings hash|local] [--concurrency 8] [--queries 50]
//   [--data-dir DIR] [--query-only] [--compare-root CHECKOUT --compare-data-dir DIR]
//   [--node-args "ARGS"] [--compare-node-args "ARGS"]
// Standalone at scale: one built server with a fresh data directory ingests passages of public
// text already on the machine (scripts/scale-corpus.mjs) up to each size in turn, and at each
// size prints the ingest rate of the step, the server's RSS (now and peak), the database's size
// on disk and the p50/p95 latency of every retrieval mode. The load average is printed with
// every figure: the machines are shared.
// --query-only skips the ingest: the data directory (--data-dir) already holds the largest size.
// --compare-root runs a second server, built in another checkout, on its own copy of the data
// (--compare-data-dir; with --query-only the script copies the database there when it holds none) beside the first; the two answer each question in turn, so before/after
// figures share the machine's load; the compared server's line also gives, per mode, the share of
// this checkout's results the compared one returned too (agree).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { loadAverage, machine, option, percentile, startBuiltServer } from './bench-kit.mjs';
import { scaleCorpus } from './scale-corpus.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const { TrellisClient } = require('@trellis/client');

const sizes = option('sizes', '10000,100000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const embeddings = option('embeddings', 'hash');
const concurrency = Number(option('concurrency', '8'));
const queryCount = Number(option('queries', '50'));
const keptDir = option('data-dir', undefined);
// Node and V8 flags of each server (split on spaces), to compare settings of one build side by side.
const nodeArgs = (option('node-args', '') ?? '').split(' ').filter(Boolean);
const compareNodeArgs = (option('compare-node-args', '') ?? '').split(' ').filter(Boolean);
const queryOnly = process.argv.includes('--query-only');
const compareRoot = option('compare-root', undefined);
const compareDir = option('compare-data-dir', undefined);
if (queryOnly && !keptDir) throw new Error('--query-only needs --data-dir');
if (compareRoot && !compareDir) throw new Error('--compare-root needs --compare-data-dir');
// Each mode with the server's default strategy; with hash embeddings that is the weighted walk, so
// the ppr walk that a semantic model gets by default (`npm start`) is measured beside it.
const MODES = ['vector', 'fulltext', 'graph', 'hybrid', ...(embeddings === 'hash' ? ['graph ppr', 'hybrid ppr'] : [])];
const request = (mode, query) => ({ knowledgeBase: 'scale', query, mode: mode.split(' ')[0], strategy: mode.split(' ')[1] ?? '', topK: 10 });

const corpus = scaleCorpus(root, sizes.at(-1));
const digest = createHash('sha1').update(corpus.map((p) => p.id).join('\n')).digest('hex').slice(0, 12);
const bySource = Object.entries(corpus.reduce((m, p) => ((m[p.source] = (m[p.source] ?? 0) + 1), m), {}));
console.log(`machine: ${machine()}`);
console.log(`corpus: ${corpus.length} passages (digest ${digest}; ${bySource.map(([s, n]) => `${s} ${n}`).join(', ')}), TRELLIS_EMBEDDINGS=${embeddings}, ${concurrency} uploads at a time`);

const dataDir = keptDir ? resolve(keptDir) : mkdtempSync(join(tmpdir(), 'trellis-scale-'));

/** A built standalone server of `checkout` on `directory`, and a client of it, once it is healthy. */
async function startServer(checkout, directory, args) {
  const server = await startBuiltServer({ checkout, dataDir: directory, embeddings, nodeArgs: args });
  return { process: server.process, client: new TrellisClient({ address: server.grpcAddress, timeoutMs: 300_000 }) };
}

// The compared server answers from a copy of the database, made here when its directory has none
// (both servers stopped, so the database and its write-ahead log are whole on disk).
if (compareRoot && queryOnly && !existsSync(join(resolve(compareDir), 'trellis.db'))) {
  mkdirSync(resolve(compareDir), { recursive: true });
  for (const file of ['trellis.db', 'trellis.db-wal']) if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(resolve(compareDir), file));
}

const main = await startServer(root, dataDir, nodeArgs);
const server = main.process;
const client = main.client;
const compared = compareRoot ? await startServer(resolve(compareRoot), resolve(compareDir), compareNodeArgs) : null;
const servers = [{ name: 'this checkout', client }, ...(compared ? [{ name: compareRoot, client: compared.client }] : [])];

/** A server's resident memory now and at its peak (Linux /proc). */
function memory(pid = server.pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
}

function databaseMb() {
  const bytes = readdirSync(dataDir).filter((f) => f.startsWith('trellis.db')).reduce((n, f) => n + statSync(join(dataDir, f)).size, 0);
  return Math.round(bytes / 2 ** 20);
}

async function upload(passages) {
  let next = 0;
  const worker = async () => {
    while (next < passages.length) {
      const p = passages[next++];
      await client.uploadDocument({ knowledgeBase: 'scale', filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Whether the server is still indexing. A server that has shed the question for longer than the
 * client's deadline (it sheds every call while its event loop is far behind, as after a pause of
 * the process) is asked again: the ingest goes on either way.
 */
async function stillIndexing() {
  try {
    return await client.isIndexing('scale');
  } catch (error) {
    if (error.code !== 8) throw error;
    console.log(`progress refused (${error.details}); asking again (load ${loadAverage()})`);
    return true;
  }
}

/** Queries of passages already indexed: the first words of every n-th one. */
function queriesFor(size) {
  const step = Math.max(1, Math.floor(size / queryCount));
  return Array.from({ length: Math.min(queryCount, size) }, (_, i) => corpus[i * step].text.split(' ').slice(0, 10).join(' '));
}

const rows = [];
try {
  if (!(await client.listKnowledgeBases()).knowledgeBases.some((k) => k.name === 'scale')) await client.createKnowledgeBase({ name: 'scale' });
  let indexed = 0;
  for (const size of sizes) {
    const started = performance.now();
    if (!queryOnly) {
      await upload(corpus.slice(indexed, size));
      while (await stillIndexing()) await new Promise((r) => setTimeout(r, 1000));
    }
    const seconds = (performance.now() - started) / 1000;
    const loadAfterIngest = loadAverage();
    const chunks = size - indexed;
    indexed = size;
    const latency = {};
    const compareLatency = {};
    // One question of every mode before any is timed: after a start the server loads its matrices
    // and builds its full text in the background, and the first mode timed would also time that.
    for (const mode of MODES) for (const s of servers) await s.client.retrieveChunks(request(mode, 'warm up'));
    for (const mode of MODES) {
      const times = servers.map(() => []);
      let shared = 0;
      let asked = 0;
      const answers = servers.map(() => []);
      for (const [q, query] of queriesFor(size).entries()) {
        // Turn by turn, first one then the other first, so neither always runs on a warmer cache.
        for (const i of q % 2 === 0 ? servers.keys() : [...servers.keys()].reverse()) {
          const t = performance.now();
          const { chunks } = await servers[i].client.retrieveChunks(request(mode, query));
          times[i].push(performance.now() - t);
          answers[i] = chunks.map((c) => c.chunkId);
        }
        // How many of this checkout's results the compared server also returned.
        if (compared) {
          shared += answers[0].filter((id) => answers[1].includes(id)).length;
          asked += answers[0].length;
        }
      }
      const figure = (values) => `${percentile(values, 50).toFixed(0)} / ${percentile(values, 95).toFixed(0)}`;
      latency[mode] = figure(times[0]);
      if (compared) compareLatency[mode] = `${figure(times[1])} (agree ${asked === 0 ? '-' : ((100 * shared) / asked).toFixed(1)} %)`;
    }
    if (compared) {
      const { rssMb, peakMb } = memory(compared.process.pid);
      console.log(`${size} passages, ${compareRoot} ${compareNodeArgs.join(' ')}: RSS ${rssMb} MB (peak ${peakMb}); p50/p95 ms ${MODES.map((m) => `${m} ${compareLatency[m]}`).join(', ')} (load ${loadAverage()})`);
    }
    const { rssMb, peakMb } = memory();
    const row = { size, seconds, rate: queryOnly ? 'query only' : (chunks / seconds).toFixed(1), rssMb, peakMb, dbMb: databaseMb(), latency, loadAfterIngest, loadAfterQueries: loadAverage() };
    rows.push(row);
    console.log(
      `${size} passages: +${chunks} in ${seconds.toFixed(0)} s (${row.rate}/s, load ${loadAfterIngest}); RSS ${rssMb} MB (peak ${peakMb}); database ${row.dbMb} MB; ` +
        `p50/p95 ms ${MODES.map((m) => `${m} ${latency[m]}`).join(', ')} (load ${row.loadAfterQueries})`,
    );
  }
  console.log(`\n| passages | ingest of the step | RSS / peak | database | ${MODES.map((m, i) => (i === 0 ? `${m} p50/p95` : m)).join(' | ')} | load (ingest; queries) |`);
  console.log(`| --- | --- | --- | --- | ${MODES.map(() => '---').join(' | ')} | --- |`);
  for (const r of rows) {
    console.log(`| ${r.size.toLocaleString('en')} | ${r.rate}/s (${r.seconds.toFixed(0)} s) | ${r.rssMb} / ${r.peakMb} MB | ${r.dbMb} MB | ${MODES.map((m) => `${r.latency[m]} ms`).join(' | ')} | ${r.loadAfterIngest}; ${r.loadAfterQueries} |`);
  }
} finally {
  for (const s of [main, ...(compared ? [compared] : [])]) {
    s.client.close();
    s.process.kill('SIGTERM');
    await new Promise((r) => s.process.once('exit', r));
  }
  if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
}
