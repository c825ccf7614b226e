// npm run bench:large-document [-- --mb N] [--embeddings hash|local] — one large markdown document
// through the standalone server: how long it takes to index, and whether the main thread's event
// loop stalls meanwhile (issue 14: no stall over 200 ms during a 3 MB document).
// The document is built from the NestJS docs extracts in datasets/nestjs-docs (MIT, see its
// LICENCE), each section repeated under a part number until it is N MB (default 3), so no two
// chunks are the same. The built server runs with a fresh data directory; /metrics is scraped
// every second: prom-client's event-loop lag of the main thread (max and p99 since the last
// scrape, so one figure per second), and /healthz is probed every 100 ms.
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import { loadAverage, machine, option, percentile, readJsonl, runBench } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const megabytes = Number(option('mb', '3'));
const embeddings: string = option('embeddings', 'hash');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function largeDocument(bytes: number): string {
  const sections = readJsonl(join(root, 'datasets/nestjs-docs'), 'corpus.jsonl') as Array<{ title: string; text: string }>;
  const parts: string[] = ['# NestJS notes, repeated\n'];
  let size = parts[0]!.length;
  for (let part = 1; size < bytes; part++) {
    for (const s of sections) {
      const section = `\n## Part ${part}: ${s.title}\n\nThese are the part ${part} notes on ${s.title}.\n\n${s.text}\n`;
      parts.push(section);
      size += Buffer.byteLength(section);
      if (size >= bytes) break;
    }
  }
  return parts.join('');
}

async function main(): Promise<void> {
  const text = largeDocument(megabytes * 1024 * 1024);
  const server = await startStandaloneProcess({ env: embeddings === 'hash' ? { TRELLIS_EMBEDDINGS: 'hash' } : {} });
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 600_000 });
  const lagMax: number[] = [];
  const lagP99: number[] = [];
  const health: number[] = [];
  let running = true;
  const metric = (body: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(body)?.[1] ?? NaN) * 1000;
  // prom-client's lag figures are since the last scrape: the first would include the server's start-up.
  await fetch(`${server.httpUrl}/metrics`);
  const scraper = (async () => {
    while (running) {
      const body = await (await fetch(`${server.httpUrl}/metrics`)).text();
      lagMax.push(metric(body, 'trellis_nodejs_eventloop_lag_max_seconds'));
      lagP99.push(metric(body, 'trellis_nodejs_eventloop_lag_p99_seconds'));
      await sleep(1000);
    }
  })();
  const prober = (async () => {
    while (running) {
      const started = performance.now();
      await fetch(`${server.httpUrl}/healthz`, { signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
      health.push(performance.now() - started);
      await sleep(100);
    }
  })();
  try {
    await client.createKnowledgeBase({ name: 'large' });
    const loadBefore = loadAverage();
    const started = performance.now();
    const uploaded = await client.uploadDocument({ knowledgeBase: 'large', filename: 'large.md', sourceUri: 'large.md' }, Buffer.from(text));
    const uploadMs = performance.now() - started;
    let chunks = 0;
    for (;;) {
      const [doc] = (await client.listAllDocuments('large')).filter((d) => d.id === uploaded.id);
      if (doc?.status === 'INDEX_STATUS_FAILED') throw new Error(`the document failed: ${doc.error || doc.statusDetail}`);
      if (doc?.status === 'INDEX_STATUS_GRAPHED') {
        chunks = doc.chunkCounts.reduce((n, c) => n + c.count, 0);
        break;
      }
      await sleep(500);
    }
    const seconds = (performance.now() - started) / 1000;
    running = false;
    await Promise.all([scraper, prober]);
    const stalls = lagMax.filter((ms) => ms > 200).length;
    console.log(`machine: ${machine()}; ${new Date().toISOString()}`);
    console.log(`document: ${(Buffer.byteLength(text) / 2 ** 20).toFixed(2)} MB markdown, ${chunks} chunks; embeddings: ${embeddings}`);
    console.log(`upload answered in ${uploadMs.toFixed(0)} ms; graphed after ${seconds.toFixed(1)} s (${(chunks / seconds).toFixed(1)} chunks/s); load before ${loadBefore}, after ${loadAverage()}`);
    console.log(
      `main-thread event-loop lag, per second (${lagMax.length} samples): max of each second p50 ${percentile(lagMax, 50).toFixed(0)} ms, ` +
        `p99 ${percentile(lagMax, 99).toFixed(0)} ms, worst ${Math.max(...lagMax).toFixed(0)} ms; seconds with a stall over 200 ms: ${stalls}; ` +
        `p99 within each second, worst ${Math.max(...lagP99).toFixed(0)} ms`,
    );
    console.log(`/healthz every 100 ms (${health.length} probes): p50 ${percentile(health, 50).toFixed(1)} ms, p99 ${percentile(health, 99).toFixed(1)} ms, max ${Math.max(...health).toFixed(1)} ms`);
  } finally {
    running = false;
    client.close();
    await server.dispose();
  }
}

runBench(main);
