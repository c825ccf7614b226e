// npm run bench:ask-while-indexing [-- --concurrency 2] [--latency-ms 200] [--passages 120] [--asks 6]
//   [--compare-root DIR] — how long a person's question waits while an LLM ingest runs. Starts
// the built standalone server (of this checkout, then of --compare-root's, side by side) against
// bench:peer's fake OpenAI-compatible model (fixed latency, TRELLIS_LLM_MAX_CONCURRENCY calls at
// once), indexes 10 passages, then uploads the rest and, while they index, asks questions one
// after another (Ask: retrieval and an LLM answer). Prints each Ask's latency and how long the
// ingest ran on after the last, with the load average.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PeerLlm, startServerOnPeerLlm } from './bench-peer-llm';
import { loadAverage, machine, option, percentile, readJsonl, runBench, untilGraphed, uploadPassages } from './bench-kit.mjs';

const root = resolve(__dirname, '..');
const concurrency = Number(option('concurrency', '2'));
const latencyMs = Number(option('latency-ms', '200'));
const asks = Number(option('asks', '6'));
const compareRoot = option('compare-root', '');
type Passage = { id: string; title: string; text: string };
const passages = (readJsonl(resolve(option('corpus', join(root, '../shared/datasets/hotpotqa-100'))), 'corpus.jsonl') as Passage[]).slice(0, Number(option('passages', '120')));

async function run(checkout: string): Promise<void> {
  const llm = new PeerLlm(64);
  await llm.start();
  const scratch = mkdtempSync(join(tmpdir(), 'trellis-bench-ask-'));
  const server = await startServerOnPeerLlm(checkout, llm, join(scratch, 'data'), { TRELLIS_LLM_MAX_CONCURRENCY: String(concurrency) });
  const client = server.client;
  try {
    await client.createKnowledgeBase({ name: 'ask', extraction: { entityTypes: [], instructions: '', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    await untilGraphed(client, 'ask', await uploadPassages(client, 'ask', passages.slice(0, 10)));
    llm.latencyMs = latencyMs;
    const ingest = uploadPassages(client, 'ask', passages.slice(10)).then((ids) => untilGraphed(client, 'ask', ids));
    // Let the extraction calls queue up first.
    await new Promise((r) => setTimeout(r, 1_500));
    const times: number[] = [];
    for (let i = 0; i < asks; i++) {
      const started = performance.now();
      await client.ask({ knowledgeBase: 'ask', question: `Who founded the company in question ${i}?` });
      times.push(performance.now() - started);
    }
    const askedAt = performance.now();
    await ingest;
    console.log(
      `${checkout}: Ask while indexing ${times.map((t) => t.toFixed(0)).join(', ')} ms (p50 ${percentile(times, 50).toFixed(0)} ms); ` +
        `the ingest ran on ${((performance.now() - askedAt) / 1000).toFixed(1)} s after the last (load ${loadAverage()})`,
    );
  } finally {
    await server.stop();
    await llm.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  console.log(`machine: ${machine()}; ${new Date().toISOString()}; ${passages.length} passages, fake LLM ${latencyMs} ms, TRELLIS_LLM_MAX_CONCURRENCY=${concurrency}`);
  for (const checkout of compareRoot ? [root, resolve(compareRoot)] : [root]) await run(checkout);
}

runBench(main, (error: unknown) => `bench:ask-while-indexing failed: ${error instanceof Error ? error.message : String(error)}`);
