// npm run bench:distributed [-- CORPUS_DIR] [--extraction-processes 1,2] [--llm-passages 150] [--events-per-partition 1,4]
// Ingest throughput of the six services on Kafka and the SQL store (scripts/infra-up.sh), with one
// and with two extraction processes and local extraction, and gRPC query latency (those runs take
// TRELLIS_KAFKA_EVENTS_PER_PARTITION from the environment when it is set). Then LLM
// extraction through a fake OpenAI-compatible model (200 ms per answer, 8 calls at once across the
// deployment) with one extraction process, at each TRELLIS_KAFKA_EVENTS_PER_PARTITION given: time
// to graphed, LLM calls, the most in flight, and the floor (calls × latency ÷ 8).
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment, fakeProviderEnv } from '@trellis/testing';
import { chunksOf, loadAverage, machine, option, percentile, readJsonl, untilGraphed, uploadPassages } from './bench-kit.mjs';
import { PeerLlm } from './bench-peer-llm';

const root = resolve(__dirname, '..');
const corpusArgument = process.argv.slice(2).find((a, i, all) => !a.startsWith('--') && !all[i - 1]?.startsWith('--'));
const corpusDir = resolve(corpusArgument ?? join(root, '../shared/datasets/hotpotqa-100'));
const processCounts = option('extraction-processes', '1,2').split(',').map(Number).filter((n) => n > 0);
const llmPassages = Number(option('llm-passages', '150'));
const llmEventsPerPartition = option('events-per-partition', '1,4').split(',').map(Number).filter((n) => n > 0);
const LLM_LATENCY_MS = 200;
const LLM_CONCURRENCY = 8;
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;
const questions = readJsonl(corpusDir, 'questions.jsonl') as Array<{ question: string }>;

/** The six services on a database and topic prefix of their own (`runId`), 6 partitions, 2 consumed at once, and a client of them. */
async function startDeployment(runId: string, extraEnv: Record<string, string>): Promise<{ deployment: DistributedDeployment; client: TrellisClient }> {
  const deployment = new DistributedDeployment({
    kafkaBrokers: process.env.KAFKA_BROKERS ?? '127.0.0.1:9092',
    mysqlUrl: process.env.TRELLIS_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:4000/',
    runId: `${runId}${randomBytes(3).toString('hex')}`,
    extraEnv: { TRELLIS_KAFKA_PARTITIONS: '6', TRELLIS_KAFKA_CONCURRENCY: '2', ...extraEnv },
  });
  deployment.prepare();
  await deployment.startAll();
  return { deployment, client: new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses(), timeoutMs: 120_000 }) };
}

async function run(extractionProcesses: number): Promise<void> {
  const eventsPerPartition = process.env.TRELLIS_KAFKA_EVENTS_PER_PARTITION;
  const { deployment, client } = await startDeployment('bench', eventsPerPartition ? { TRELLIS_KAFKA_EVENTS_PER_PARTITION: eventsPerPartition } : {});
  for (let i = 1; i < extractionProcesses; i++) await deployment.startReplica('extraction');
  try {
    await client.createKnowledgeBase({ name: 'bench' });
    const started = performance.now();
    const ids = await uploadPassages(client, 'bench', passages, 1);
    const uploadSeconds = (performance.now() - started) / 1000;
    const chunks = chunksOf(await untilGraphed(client, 'bench', ids, 500));
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
      `extraction processes: ${extractionProcesses}, events per partition ${eventsPerPartition ?? 'default'} | upload ${uploadSeconds.toFixed(1)} s | ingest to graphed ${seconds.toFixed(1)} s, ${chunks} chunks, ${(chunks / seconds).toFixed(1)} chunks/s | ` +
        `Retrieve p50 ${percentile(retrieve, 50).toFixed(1)} ms p95 ${percentile(retrieve, 95).toFixed(1)} ms | Ask p50 ${percentile(ask, 50).toFixed(1)} ms p95 ${percentile(ask, 95).toFixed(1)} ms`,
    );
  } finally {
    client.close();
    await deployment.stopAll();
  }
}

/** One extraction process extracting with the fake model, `perPartition` events of distinct keys at once in each partition. */
async function runWithLlm(perPartition: number): Promise<void> {
  const llm = new PeerLlm(64);
  await llm.start();
  const { deployment, client } = await startDeployment('benchllm', {
    ...fakeProviderEnv(llm.baseUrl, 64, { TRELLIS_LLM_MAX_CONCURRENCY: String(LLM_CONCURRENCY) }),
    TRELLIS_KAFKA_EVENTS_PER_PARTITION: String(perPartition),
  });
  try {
    // One extraction call per passage, as bench:peer asks of both systems.
    await client.createKnowledgeBase({ name: 'bench', extraction: { entityTypes: [], instructions: '', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    llm.latencyMs = LLM_LATENCY_MS;
    llm.snapshot();
    const started = performance.now();
    const ids = await uploadPassages(client, 'bench', passages.slice(0, llmPassages));
    const uploadSeconds = (performance.now() - started) / 1000;
    await untilGraphed(client, 'bench', ids);
    const seconds = (performance.now() - started) / 1000;
    const calls = llm.snapshot();
    const floor = (calls.chatTotal * LLM_LATENCY_MS) / LLM_CONCURRENCY / 1000;
    console.log(
      `LLM extraction, events per partition ${perPartition}: ${llmPassages} passages graphed in ${seconds.toFixed(1)} s (upload ${uploadSeconds.toFixed(1)} s) | ` +
        `LLM calls ${calls.chatTotal} (${calls.chat['trellis extraction']} extraction, ${calls.chat['trellis summary']} summary), most in flight ${calls.maxInFlight} of ${LLM_CONCURRENCY} | ` +
        `floor ${floor.toFixed(1)} s, ${(seconds / floor).toFixed(2)}× it | load ${loadAverage()}`,
    );
  } finally {
    client.close();
    await deployment.tearDown();
    await llm.stop();
  }
}

void (async () => {
  console.log(`machine: ${machine()}, load ${loadAverage()}; corpus ${passages.length} passages`);
  for (const n of processCounts) await run(n);
  for (const n of llmEventsPerPartition) await runWithLlm(n);
})();
