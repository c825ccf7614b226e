// npm run bench:distributed — ingest throughput of the six services on Kafka and the SQL store
// (scripts/infra-up.sh), with one and with two extraction processes, and gRPC query latency.
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment } from '@trellis/testing';
import { loadAverage, machine, percentile, readJsonl } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const corpusDir = resolve(process.argv[2] ?? join(root, '../shared/datasets/hotpotqa-100'));
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;
const questions = readJsonl(corpusDir, 'questions.jsonl') as Array<{ question: string }>;

async function run(extractionProcesses: number): Promise<void> {
  const deployment = new DistributedDeployment({
    kafkaBrokers: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
    mysqlUrl: process.env.TRELLIS_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:4000/',
    runId: `bench${randomBytes(3).toString('hex')}`,
    extraEnv: { TRELLIS_KAFKA_PARTITIONS: '6', TRELLIS_KAFKA_CONCURRENCY: '2' },
  });
  deployment.prepare();
  await deployment.startAll();
  for (let i = 1; i < extractionProcesses; i++) await deployment.startReplica('extraction');
  const client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses(), timeoutMs: 120_000 });
  try {
    await client.createKnowledgeBase({ name: 'bench' });
    const started = performance.now();
    for (const p of passages) await client.uploadDocument({ knowledgeBase: 'bench', filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
    const uploadSeconds = (performance.now() - started) / 1000;
    let chunks = 0;
    for (;;) {
      const documents = await client.listAllDocuments('bench');
      if (documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED' || d.status === 'INDEX_STATUS_FAILED')) {
        chunks = documents.reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0);
        break;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const seconds = (performance.now() - started) / 1000;
    const time = async (call: (q: string) => Promise<unknown>) => {
      const times: number[] = [];
      for (const { question } of questions) {
        const t = performance.now();
        await call(question);
        times.push(performance.now() - t);
      }
      return times;
    };
    const retrieve = await time((q) => client.retrieve({ knowledgeBase: 'bench', query: q, topK: 5 }));
    const ask = await time((q) => client.ask({ knowledgeBase: 'bench', question: q, topK: 5 }));
    console.log(
      `extraction processes: ${extractionProcesses} | upload ${uploadSeconds.toFixed(1)} s | ingest to graphed ${seconds.toFixed(1)} s, ${chunks} chunks, ${(chunks / seconds).toFixed(1)} chunks/s | ` +
        `Retrieve p50 ${percentile(retrieve, 50).toFixed(1)} ms p95 ${percentile(retrieve, 95).toFixed(1)} ms | Ask p50 ${percentile(ask, 50).toFixed(1)} ms p95 ${percentile(ask, 95).toFixed(1)} ms`,
    );
  } finally {
    client.close();
    await deployment.stopAll();
  }
}

void (async () => {
  console.log(`machine: ${machine()}, load ${loadAverage()}; corpus ${passages.length} passages`);
  for (const n of [1, 2]) await run(n);
})();
