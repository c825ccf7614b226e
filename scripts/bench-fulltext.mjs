// node scripts/bench-fulltext.mjs [-- --sizes 10000,30000] [--queries 50] [--k 30] [--engines sqlite,mysql]
//   [--builds after=libs/storage/dist,before=../wt-before/libs/storage/dist]
// Full-text search alone, at scale, with no server in the way: each build of @trellis/storage
// named by --builds gets a store of its own (SQLite in a temporary directory; a fresh database
// on TRELLIS_TEST_MYSQL_URL for the MySQL family), filled straight through the store API with
// the passages of scripts/scale-corpus.mjs (one document per passage, as bench:scale uploads
// them), and at each size answers the same questions: the first 10 words of every n-th
// passage (bench:scale's questions) and those words plus the first 10 of another passage (a
// long query, like the hybrid mode's second hop). The builds take turns query by query, so
// they share the load; every figure has the load average beside it. CPU is this process's
// (user + system) during the search: all of SQLite's work, only the client's for the MySQL
// family, and far less disturbed by other processes than wall time. `agree` is the share of
// the first build's top k that the others also return.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAverage, machine, option, percentile } from './bench-kit.mjs';
import { scaleCorpus } from './scale-corpus.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);
const sizes = option('sizes', '10000,30000').split(',').map(Number).filter((n) => n > 0).sort((a, b) => a - b);
const queryCount = Number(option('queries', '50'));
const k = Number(option('k', '30'));
const engines = option('engines', 'sqlite').split(',');
const builds = option('builds', 'this=libs/storage/dist')
  .split(',')
  .map((spec) => {
    const [name, path] = spec.includes('=') ? spec.split('=') : [spec, spec];
    return { name, storage: require(resolve(root, path)) };
  });
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;
const SETTINGS = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const EMBEDDING = new Float32Array([1, 0, 0, 0]);
const WRITE_BATCH = 100;

const corpus = scaleCorpus(root, sizes.at(-1));
console.log('| engine | build | passages | questions | wall p50 / p95 | CPU p50 / p95 | agree | load |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
console.log(`machine: ${machine()}; corpus ${corpus.length} passages; k ${k}; builds ${builds.map((b) => b.name).join(', ')}; load ${loadAverage()}`);

/**
 * SqliteStore.close() waits for its checkpoint worker, which is unref'd: with nothing else
 * pending the process would end (exit code 13) before the worker does.
 */
async function closeKeptAlive(store) {
  const alive = setInterval(() => undefined, 1000);
  try {
    await store.close();
  } finally {
    clearInterval(alive);
  }
}

async function openStore(build, engine, tag) {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `trellis-fulltext-${tag}-`));
    const store = new build.storage.SqliteStore(join(dir, 'trellis.db'));
    return { store, cleanup: async () => (await closeKeptAlive(store), rmSync(dir, { recursive: true, force: true })) };
  }
  if (!mysqlUrl) throw new Error('--engines mysql needs TRELLIS_TEST_MYSQL_URL');
  const database = `trellis_bench_fulltext_${tag}_${process.pid}`;
  const url = new URL(mysqlUrl);
  url.pathname = `/${database}`;
  const store = await build.storage.MysqlStore.connect(url.toString(), { poolSize: 4, logger: { info: () => undefined, warn: () => undefined } });
  await store.migrate();
  const dropDatabase = async () => {
    const admin = await require('mysql2/promise').createConnection(mysqlUrl);
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  };
  return { store, cleanup: async () => (await store.close(), await dropDatabase()) };
}

async function fill(store, scope, from, to) {
  for (let start = from; start < to; start += WRITE_BATCH) {
    const passages = corpus.slice(start, Math.min(to, start + WRITE_BATCH));
    // Ids are unique across knowledge bases, as the services' stable ids are.
    const id = (p) => `${scope.kbId}-${p.id}`;
    for (const p of passages) {
      await store.repositories.documents.saveDocumentVersion(scope, { id: id(p), sourceUri: p.id, filename: `${p.id}.txt`, mimeType: 'text/plain', contentHash: p.id, version: 1, sizeBytes: p.text.length, metadata: {}, text: p.text });
    }
    const chunks = passages.map((p) => ({ id: `${id(p)}-0`, documentId: id(p), version: 1, ordinal: 0, text: p.text, heading: p.title, tokenCount: p.text.split(' ').length, contentHash: p.id, embedding: EMBEDDING }));
    await store.repositories.chunks.upsertChunks(scope, chunks);
  }
}

function questionsFor(size) {
  const step = Math.max(1, Math.floor(size / queryCount));
  const words = (p, n) => p.text.split(' ').slice(0, n).join(' ');
  const short = Array.from({ length: Math.min(queryCount, size) }, (_, i) => words(corpus[i * step], 10));
  const long = short.map((q, i) => `${q} ${words(corpus[(i * step + Math.floor(step / 2)) % size], 10)}`);
  return { short, long };
}

for (const engine of engines) {
  const stores = [];
  try {
    for (const [i, build] of builds.entries()) {
      const { store, cleanup } = await openStore(build, engine, `${build.name.replace(/\W/g, '')}${i}`);
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 'bench' }, { name: 'fulltext', description: '', settings: SETTINGS });
      // A second knowledge base with the same text: one KB's search should not pay for another's.
      const other = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 'bench' }, { name: 'other', description: '', settings: SETTINGS });
      stores.push({ build, store, cleanup, scope: { tenantId: 'bench', kbId: kb.id }, other: { tenantId: 'bench', kbId: other.id } });
    }
    let filled = 0;
    for (const size of sizes) {
      for (const s of stores) {
        const started = performance.now();
        await fill(s.store, s.scope, filled, size);
        await fill(s.store, s.other, filled, Math.min(size, filled + Math.ceil((size - filled) / 4)));
        console.log(`${engine} ${s.build.name}: ${size} passages written in ${((performance.now() - started) / 1000).toFixed(0)} s (load ${loadAverage()})`);
      }
      filled = size;
      for (const [kind, questions] of Object.entries(questionsFor(size))) {
        for (const s of stores) await s.store.repositories.chunks.searchChunksFullText(s.scope, 'warm up', k);
        const times = stores.map(() => []);
        const cpuTimes = stores.map(() => []);
        const agree = stores.map(() => []);
        for (const [q, question] of questions.entries()) {
          const order = q % 2 === 0 ? stores.map((_, i) => i) : stores.map((_, i) => stores.length - 1 - i);
          const results = [];
          for (const i of order) {
            const t = performance.now();
            const cpu = process.cpuUsage();
            results[i] = await stores[i].store.repositories.chunks.searchChunksFullText(stores[i].scope, question, k);
            times[i].push(performance.now() - t);
            const used = process.cpuUsage(cpu);
            cpuTimes[i].push((used.user + used.system) / 1000);
          }
          const first = new Set(results[0].map((h) => h.chunk.id));
          results.forEach((r, i) => agree[i].push(first.size === 0 ? 1 : r.filter((h) => first.has(h.chunk.id)).length / first.size));
        }
        const load = loadAverage();
        for (const [i, s] of stores.entries()) {
          const mean = agree[i].reduce((a, b) => a + b, 0) / agree[i].length;
          const cpu = `${percentile(cpuTimes[i], 50).toFixed(1)} / ${percentile(cpuTimes[i], 95).toFixed(1)} ms`;
          console.log(`| ${engine} | ${s.build.name} | ${size.toLocaleString('en')} | ${kind} | ${percentile(times[i], 50).toFixed(1)} / ${percentile(times[i], 95).toFixed(1)} ms | ${cpu} | ${(mean * 100).toFixed(1)} % | ${load} |`);
        }
      }
    }
  } finally {
    for (const s of stores) await s.cleanup();
  }
}
