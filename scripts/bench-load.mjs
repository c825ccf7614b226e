// npm run bench:load [-- --clients 200 --seconds 30 --corpus DIR --embeddings hash --configs default,default:nofront,off --generator-threads 1]
// Load shedding under a burst. Starts the built standalone server on free ports, indexes a
// small corpus once (default datasets/nestjs-docs, TRELLIS_EMBEDDINGS=hash), then for each
// configuration (default: the shipped limits; `off`: TRELLIS_MAX_CONCURRENT_REQUESTS=0; or
// `C/Q/W/L` for concurrency/queue/wait-ms/event-loop-delay-ms; any of them with `:nofront` for
// TRELLIS_FRONT_THREAD=false, the ports served by the main thread as before the front thread)
// restarts the server on the same data and runs N concurrent clients, each alternating
// RetrieveChunks and Ask for a fixed time, while /healthz, /readyz and gRPC health are polled
// every 100 ms from a separate process. A refused client waits the server's `retry-after-ms` before its next
// call. `--generator-threads N` spreads the clients over N worker threads, so one event loop
// reading every answer is not itself the queue the latencies measure (the event-loop lag
// printed is the worst thread's).
// Prints throughput, accepted and rejected latencies, health-probe latency and timeouts,
// each with the load average (os.loadavg: 1, 5, 15 min) taken when the figure was measured.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { freePort, loadAverage, machine, option, percentile, readJsonl, untilGraphed, uploadPassages } from './bench-kit.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const { TrellisClient } = require('@trellis/client');
const { status } = require('@grpc/grpc-js');

const corpusDir = resolve(option('corpus', join(root, 'datasets/nestjs-docs')));
const clients = Number(option('clients', '200'));
const seconds = Number(option('seconds', '30'));
const embeddings = option('embeddings', 'hash');
const configs = option('configs', 'default').split(',').filter(Boolean);
const callTimeoutMs = Number(option('call-timeout-ms', '10000'));
const probeTimeoutMs = Number(option('probe-timeout-ms', '1000'));
const generatorThreads = Math.max(1, Number(option('generator-threads', '1')));

const passages = readJsonl(corpusDir, 'corpus.jsonl');
const questions = readJsonl(corpusDir, 'questions.jsonl').map((q) => q.question);

const ms = (n) => (Number.isNaN(n) ? 'n/a' : `${n.toFixed(1)} ms`);
const load = () => `load ${loadAverage()}`;
const sleep = (t) => new Promise((r) => setTimeout(r, t));

function limitsEnv(config) {
  const [limits, variant] = config.split(':');
  const front = variant === 'nofront' ? { TRELLIS_FRONT_THREAD: 'false' } : {};
  if (limits === 'default') return front;
  if (limits === 'off') return { ...front, TRELLIS_MAX_CONCURRENT_REQUESTS: '0' };
  const [concurrent, queued, wait, loopDelay] = limits.split('/');
  return { ...front, TRELLIS_MAX_CONCURRENT_REQUESTS: concurrent, TRELLIS_MAX_QUEUED_REQUESTS: queued ?? '32', TRELLIS_MAX_QUEUE_WAIT_MS: wait ?? '50', TRELLIS_MAX_EVENT_LOOP_DELAY_MS: loopDelay ?? '100' };
}

async function startServer(dataDir, extraEnv) {
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const server = spawn(process.execPath, [join(root, 'services/standalone/dist/main.js')], {
    cwd: root,
    env: { ...process.env, TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(grpcPort), TRELLIS_HTTP_PORT: String(httpPort), TRELLIS_LOG_LEVEL: 'warn', OPENAI_API_KEY: '', OPENAI_BASE_URL: '', TRELLIS_EMBEDDINGS: embeddings, ...extraEnv },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((r) => server.once('exit', r));
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  for (let ready = false; !ready; ) {
    if (server.exitCode !== null) throw new Error(`server exited with ${server.exitCode}`);
    ready = await fetch(`${httpUrl}/healthz`).then((r) => r.ok, () => false);
    if (!ready) await sleep(50);
  }
  return {
    address: `127.0.0.1:${grpcPort}`,
    httpUrl,
    stop: async () => {
      server.kill('SIGTERM');
      await exited;
    },
  };
}

async function index(server) {
  const client = new TrellisClient({ address: server.address, timeoutMs: 120_000 });
  try {
    await client.createKnowledgeBase({ name: 'load' });
    const started = performance.now();
    await untilGraphed(client, 'load', await uploadPassages(client, 'load', passages, 1));
    console.log(`indexed ${passages.length} passages in ${((performance.now() - started) / 1000).toFixed(1)} s (${load()})`);
  } finally {
    client.close();
  }
}

// The prober runs in its own process, so the load generator's busy event loop does not
// count against the server's probe latency. Each round: /healthz, /readyz, gRPC health Check,
// and one RetrieveChunks whose latency is kept when it is refused (a refusal as an otherwise
// idle client sees it; its empty request costs the server nothing when admitted).
const PROBER = `
const { Client, Metadata, credentials, makeGenericClientConstructor } = require('@grpc/grpc-js');
const { service } = require('grpc-health-check');
const [httpUrl, grpcAddress, untilMs, timeoutMs] = process.argv.slice(1);
const until = Date.now() + Number(untilMs);
const Health = makeGenericClientConstructor(service, 'Health');
const health = new Health(grpcAddress, credentials.createInsecure());
const kinds = ['healthz', 'readyz', 'grpc', 'refused'];
const raw = new Client(grpcAddress, credentials.createInsecure());
const bytes = (b) => b;
const refusedCheck = () => new Promise((ok) => raw.makeUnaryRequest('/trellis.v1.RetrievalService/RetrieveChunks', bytes, bytes, Buffer.alloc(0), new Metadata(), { deadline: Date.now() + Number(timeoutMs) }, (e) => ok(e && e.code === 8 ? 'ok' : e && e.code === 4 ? 'timeout' : 'skip')));
const results = Object.fromEntries(kinds.map((k) => [k, { latencies: [], timeouts: 0, failures: 0 }]));
const grpcCheck = () => new Promise((ok) => health.check({ service: '' }, { deadline: Date.now() + Number(timeoutMs) }, (e, r) => ok(e ? (e.code === 4 ? 'timeout' : 'failed') : r.status === 'SERVING' ? 'ok' : 'failed')));
const httpCheck = (path) => fetch(httpUrl + path, { signal: AbortSignal.timeout(Number(timeoutMs)) }).then((r) => (r.ok ? 'ok' : 'failed'), (e) => (e && e.name === 'TimeoutError' ? 'timeout' : 'failed'));
(async () => {
  while (Date.now() < until) {
    for (const kind of kinds) {
      const t = performance.now();
      const outcome = await (kind === 'grpc' ? grpcCheck() : kind === 'refused' ? refusedCheck() : httpCheck('/' + kind));
      if (outcome === 'skip') continue;
      results[kind].latencies.push(performance.now() - t);
      if (outcome === 'timeout') results[kind].timeouts += 1;
      if (outcome === 'failed') results[kind].failures += 1;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  health.close();
  raw.close();
  process.stdout.write(JSON.stringify(results));
})();`;

function probeHealth(server, forMs) {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['-e', PROBER, server.httpUrl, server.address, String(Math.round(forMs)), String(probeTimeoutMs)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', (code) => (code === 0 ? ok(JSON.parse(out)) : fail(new Error(`health prober exited with ${code}`))));
  });
}

/** Samples the server's admission gauges every 250 ms: the most calls running and waiting at once. */
async function sampleAdmission(httpUrl, until) {
  const peak = { inFlight: 0, queued: 0 };
  while (performance.now() < until) {
    const text = await fetch(`${httpUrl}/metrics`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.text(), () => '');
    peak.inFlight = Math.max(peak.inFlight, Number(/^trellis_grpc_requests_in_flight(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0));
    peak.queued = Math.max(peak.queued, Number(/^trellis_grpc_requests_queued(?:\{[^}]*\})? (\d+)/m.exec(text)?.[1] ?? 0));
    await sleep(250);
  }
  return peak;
}

async function runClient(client, n, until, results) {
  let turn = n;
  {
    while (performance.now() < until) {
      const question = questions[turn % questions.length];
      const kind = turn % 2 === 0 ? 'RetrieveChunks' : 'Ask';
      turn += 1;
      const t = performance.now();
      try {
        if (kind === 'Ask') await client.ask({ knowledgeBase: 'load', question, topK: 5 });
        else await client.retrieveChunks({ knowledgeBase: 'load', query: question, topK: 5 });
        results.push({ kind, code: status.OK, ms: performance.now() - t, at: t });
      } catch (error) {
        results.push({ kind, code: error?.code ?? -1, ms: performance.now() - t, at: t });
        const retryAfter = Number(error?.metadata?.get?.('retry-after-ms')?.[0] ?? 0);
        if (retryAfter > 0) await sleep(retryAfter);
      }
    }
  }
}

/** Clients `first` … `first + count - 1` for `seconds`, in this thread: their results and how long they ran. */
async function runClients(address, first, count) {
  // Built before the clock starts: a client loads the protos, which takes the generator's CPU.
  const pool = Array.from({ length: count }, () => new TrellisClient({ address, timeoutMs: callTimeoutMs, retryShed: false }));
  const results = [];
  // This thread's own lag is in every latency it measures: reported beside them.
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const started = performance.now();
  await Promise.all(pool.map((client, n) => runClient(client, first + n, started + seconds * 1000, results)));
  const ms = performance.now() - started;
  lag.disable();
  for (const client of pool) client.close();
  return { results, ms, lag: { p50: lag.percentile(50) / 1e6, p95: lag.percentile(95) / 1e6, max: lag.max / 1e6 } };
}

/** The clients spread over `generatorThreads` threads (this one when 1): all their results, and the longest run. */
async function generateLoad(address) {
  if (generatorThreads === 1) return runClients(address, 0, clients);
  const share = Math.ceil(clients / generatorThreads);
  const threads = Array.from({ length: generatorThreads }, (_, i) => {
    const first = i * share;
    const count = Math.max(0, Math.min(share, clients - first));
    return new Promise((ok, fail) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { address, first, count }, argv: process.argv.slice(2) });
      worker.once('message', ok);
      worker.once('error', fail);
    });
  });
  const runs = await Promise.all(threads);
  const worst = (key) => Math.max(...runs.map((r) => r.lag[key]));
  return { results: runs.flatMap((r) => r.results), ms: Math.max(...runs.map((r) => r.ms)), lag: { p50: worst('p50'), p95: worst('p95'), max: worst('max') } };
}

async function runLoad(server, config) {
  const started = performance.now();
  const until = started + seconds * 1000;
  const loadBefore = load();
  const health = probeHealth(server, until - performance.now());
  const admission = sampleAdmission(server.httpUrl, until);
  const { results, ms: generatedMs, lag } = await generateLoad(server.address);
  const elapsed = generatedMs / 1000;
  const loadAfter = load();
  const probes = await health;
  const peak = await admission;
  const metrics = await fetch(`${server.httpUrl}/metrics`).then((r) => r.text(), (e) => `# /metrics failed: ${e.message}`);
  const rejectedByServer = [...metrics.matchAll(/^trellis_grpc_requests_rejected_total\{([^}]*)\} (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
  // The server's own clock on its refusals (front thread or interceptor), apart from the load generator's.
  const refusedBucket = (le) => [...metrics.matchAll(new RegExp(`^trellis_grpc_request_duration_seconds_bucket\\{(?=[^}]*code="RESOURCE_EXHAUSTED")(?=[^}]*le="${le}")[^}]*\\} (\\d+)`, 'gm'))].reduce((n, m) => n + Number(m[1]), 0);

  const accepted = results.filter((r) => r.code === status.OK);
  const rejected = results.filter((r) => r.code === status.RESOURCE_EXHAUSTED);
  const other = results.filter((r) => r.code !== status.OK && r.code !== status.RESOURCE_EXHAUSTED);
  const otherByCode = new Map();
  for (const r of other) otherByCode.set(status[r.code] ?? String(r.code), (otherByCode.get(status[r.code] ?? String(r.code)) ?? 0) + 1);
  const otherCodes = [...otherByCode].map(([code, count]) => `${code} ${count}`);
  console.log(`\n== limits: ${config} (${JSON.stringify(limitsEnv(config))}), ${clients} clients × ${seconds} s on ${generatorThreads} generator thread(s), RetrieveChunks + Ask alternating, client deadline ${callTimeoutMs} ms`);
  console.log(`load average at start:        ${loadBefore}`);
  console.log(`calls:                        ${results.length} in ${elapsed.toFixed(1)} s (${loadAfter})`);
  console.log(`accepted throughput:          ${(accepted.length / elapsed).toFixed(1)} calls/s (${accepted.length} OK) (${loadAfter})`);
  for (const kind of ['RetrieveChunks', 'Ask']) {
    const times = accepted.filter((r) => r.kind === kind).map((r) => r.ms);
    console.log(`accepted ${kind.padEnd(15)}       p50 ${ms(percentile(times, 50))}, p95 ${ms(percentile(times, 95))}, p99 ${ms(percentile(times, 99))} (${times.length} calls) (${loadAfter})`);
  }
  const all = accepted.map((r) => r.ms);
  console.log(`accepted all:                 p50 ${ms(percentile(all, 50))}, p95 ${ms(percentile(all, 95))}, p99 ${ms(percentile(all, 99))} (${loadAfter})`);
  const rejectedMs = rejected.map((r) => r.ms);
  console.log(`rejected RESOURCE_EXHAUSTED:  ${rejected.length}, latency p50 ${ms(percentile(rejectedMs, 50))}, p95 ${ms(percentile(rejectedMs, 95))}, max ${ms(rejectedMs.length ? Math.max(...rejectedMs) : NaN)}; over 100 ms: ${rejectedMs.filter((t) => t > 100).length} (${loadAfter})`);
  console.log(`generator's event-loop lag:   p50 ${ms(lag.p50)}, p95 ${ms(lag.p95)}, max ${ms(lag.max)} (worst generator thread; included in the client-side latencies above)`);
  console.log(`other failures:               ${other.length}${otherCodes.length ? ` (${otherCodes.join(', ')})` : ''} (${loadAfter})`);
  console.log(`server's peak in flight/queued: ${peak.inFlight} / ${peak.queued} (sampled every 250 ms)`);
  console.log(`server's rejected counter:    ${rejectedByServer.length ? rejectedByServer.join('; ') : 'none'}`);
  console.log(`server-side refusal time:     ${refusedBucket('0.01')} within 10 ms, ${refusedBucket('0.05')} within 50 ms, ${refusedBucket('0.1')} within 100 ms, of ${refusedBucket('\\+Inf')}`);
  for (const [kind, label] of [['healthz', '/healthz'], ['readyz', '/readyz'], ['grpc', 'gRPC health'], ['refused', 'refused, idle client']]) {
    const p = probes[kind];
    console.log(`${`${label} every ~100 ms:`.padEnd(30)}${p.latencies.length} probes, p50 ${ms(percentile(p.latencies, 50))}, p99 ${ms(percentile(p.latencies, 99))}, max ${ms(Math.max(...p.latencies))}; timeouts (> ${probeTimeoutMs} ms) ${p.timeouts}, failures ${p.failures} (${loadAfter})`);
  }
}

if (!isMainThread) {
  const { address, first, count } = workerData;
  parentPort.postMessage(await runClients(address, first, count));
  process.exit(0);
}

console.log(`machine: ${machine()}; the load generator shares these cores`);
console.log(`corpus: ${corpusDir} (${passages.length} passages, ${questions.length} questions), TRELLIS_EMBEDDINGS=${embeddings}`);
const dataDir = mkdtempSync(join(tmpdir(), 'trellis-bench-load-'));
try {
  const first = await startServer(dataDir, limitsEnv(configs[0]));
  await index(first).finally(() => first.stop());
  for (const config of configs) {
    const server = await startServer(dataDir, limitsEnv(config));
    try {
      await runLoad(server, config);
    } finally {
      await server.stop();
    }
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
