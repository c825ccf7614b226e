// What the bench:* scripts share: options, corpus files, free ports, percentiles, the machine
// and its load average (printed beside every figure: our machines are shared).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);

/** The value after `--name` on the command line, or `fallback`. */
export const option = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};

/** The records of a JSONL file of the shared datasets format. */
export const readJsonl = (dir, file) => readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

export const freePort = () =>
  new Promise((ok) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

/** The p-th percentile (nearest rank); NaN for no values. */
export const percentile = (values, p) => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
};

/** "1.23 2.34 3.45": the 1, 5 and 15 minute load averages. */
export const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');

export const machine = () => `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;

/**
 * Runs a bench's main; on failure prints the error and exits at once, so a fake LLM server or a
 * child process left running cannot keep a failed bench alive.
 */
export const runBench = (main, describe = (error) => error) =>
  main().catch((error) => {
    console.error(describe(error));
    process.exit(1);
  });

/**
 * The built standalone server of `checkout` on `dataDir`, on free ports, once /healthz answers:
 * its process, addresses and how long it took to boot. Unless `env` is given, it starts with the
 * environment `npm start` gives it in that checkout (scripts/server-env.mjs, when the checkout has
 * one) and local models only: no LLM, `embeddings` as TRELLIS_EMBEDDINGS. With `env`, that is the
 * whole environment beside the ports, the data directory and the log level.
 * @param {{ checkout: string, dataDir: string, embeddings?: string, nodeArgs?: string[], env?: Record<string, string> }} options
 */
export async function startBuiltServer({ checkout, dataDir, embeddings, nodeArgs = [], env }) {
  const main = join(checkout, 'services/standalone/dist/main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: build the standalone server first (npm run build)`);
  const grpcPort = await freePort();
  const httpPort = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, main], {
    cwd: checkout,
    env: { ...(env ?? (await localModelsEnv(checkout, embeddings))), TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(grpcPort), TRELLIS_HTTP_PORT: String(httpPort), TRELLIS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`the server at ${checkout} exited (code ${code}) before it was healthy`))));
  exited.catch(() => undefined);
  const httpUrl = `http://127.0.0.1:${httpPort}`;
  const deadline = performance.now() + 120_000;
  while (!(await Promise.race([fetch(`${httpUrl}/healthz`).then((r) => r.ok, () => false), exited]))) {
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server at ${checkout} was not healthy within 120 s`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { process: child, grpcAddress: `127.0.0.1:${grpcPort}`, httpUrl, bootMs: performance.now() - started };
}

/** What `npm start` gives the server in `checkout`, without any LLM, with `embeddings` as TRELLIS_EMBEDDINGS. */
async function localModelsEnv(checkout, embeddings) {
  const envModule = join(checkout, 'scripts/server-env.mjs');
  const env = existsSync(envModule) ? (await import(pathToFileURL(envModule).href)).serverEnv(process.env) : process.env;
  return { ...env, OPENAI_API_KEY: '', OPENAI_BASE_URL: '', TRELLIS_EMBEDDINGS: embeddings };
}

const finished = (status) => status === 'INDEX_STATUS_GRAPHED' || status === 'INDEX_STATUS_FAILED';

/**
 * Waits, as `trellis ingest` does, until each of the documents `ids` is graphed or failed. It asks
 * GetIndexingProgress about the documents still indexing only (1,000 per call), so following
 * indexing costs the server little while it indexes; listing the whole knowledge base every
 * poll took a measurable share of its CPU. Resolves with each document's last progress.
 */
export async function untilGraphed(client, knowledgeBase, ids, pollMs = 200) {
  const last = new Map();
  const pending = new Set(ids);
  while (pending.size > 0) {
    const asked = [...pending];
    const unanswered = new Set(asked);
    for (let start = 0; start < asked.length; start += 1000) {
      for (const d of (await client.getIndexingProgress(knowledgeBase, asked.slice(start, start + 1000))).documents) {
        last.set(d.id, d);
        unanswered.delete(d.id);
        if (finished(d.status)) pending.delete(d.id);
      }
    }
    // A document the knowledge base no longer holds is not waited for.
    for (const id of unanswered) pending.delete(id);
    if (pending.size > 0) await new Promise((r) => setTimeout(r, pollMs));
  }
  return ids.filter((id) => last.has(id)).map((id) => last.get(id));
}

/** Chunks of documents (or their progress), all statuses together. */
export const chunksOf = (documents) => documents.reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0);

/**
 * Uploads corpus passages (`{ id, title, text }`) as `trellis ingest` does, `atOnce` calls in
 * flight, each passage a document `<id>.txt` of its title and text. Resolves with the ids in the
 * order the uploads finished.
 */
export async function uploadPassages(client, knowledgeBase, passages, atOnce = 4) {
  const ids = [];
  const queue = [...passages];
  const uploader = async () => {
    for (let p = queue.shift(); p !== undefined; p = queue.shift()) {
      ids.push((await client.uploadDocument({ knowledgeBase, filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`))).id);
    }
  };
  await Promise.all(Array.from({ length: atOnce }, uploader));
  return ids;
}
