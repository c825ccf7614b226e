// npm run bench:estimate [-- CORPUS_DIR] — how close `EstimateIngest` comes to the tokens ingesting
// then spends. Starts FakeOpenAiServer (a real OpenAI-compatible HTTP server whose "model" turns
// each chunk into graph JSON, as in bench:extraction-cost), runs the built standalone server
// against it, and for each run asks for an estimate of the files, ingests them, and compares the
// estimate with the LLM tokens the knowledge base then recorded (the usage the fake server
// reported) and with the tokens the fake server counted itself.
// Runs: the whole corpus into a fresh knowledge base (output length: the server default); the
// same corpus into a second knowledge base with the same prompt (every chunk in the extraction
// cache); and a knowledge base with its own prompt that first indexed a sample of 100 passages
// (output length, prompt counting and summary rate measured on that sample) estimating and then
// ingesting the rest; and a fresh knowledge base estimated by `trellis ingest --estimate --sample 30`
// (the CLI's own code: 30 of the files ingested for real, the rest estimated from them), whose
// measured-plus-estimated total is then compared with what ingesting every file spent.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, startStandaloneProcess } from '@trellis/testing';
import type { ScriptedReply } from '@trellis/testing';
import { loadAverage, machine, readJsonl, runBench } from './bench-kit.mjs';
import { fakeIndexingAnswer, waitForIndexed } from './bench-indexing';
import { estimateCommand } from '../services/standalone/src/cli/estimate-command';
import { ingestCommand } from '../services/standalone/src/cli/ingest-command';
import type { Message } from './bench-indexing';

const root = resolve(__dirname, '..');
const corpusDir = resolve(process.argv[2] ?? join(root, '../shared/datasets/hotpotqa-100'));
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;

const counted = { prompt: 0, completion: 0 };

const fake = new FakeOpenAiServer(64);
fake.respondWith((request): ScriptedReply => {
  const messages = request.messages as Message[];
  const content = fakeIndexingAnswer(messages);
  counted.prompt += Math.ceil(JSON.stringify(messages).length / 4);
  counted.completion += Math.ceil(content.length / 4);
  return { kind: 'content', content };
});

/** An estimate's ratio to what was spent, as a signed percentage. */
const pct = (x: number) => `${x >= 1 ? '+' : ''}${((x - 1) * 100).toFixed(1)} %`;

const files = (subset: typeof passages): v1.EstimateFile[] =>
  subset.map((p) => ({ filename: `${p.id}.txt`, mimeType: '', sourceUri: p.id, data: Buffer.from(`${p.title}\n${p.text}`) }));

async function main(): Promise<void> {
  const baseUrl = await fake.start();
  const server = await startStandaloneProcess({
    env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'bench', TRELLIS_LLM_MODEL: 'gpt-4o-mini', TRELLIS_EMBEDDING_MODEL: 'fake-embed', TRELLIS_EMBEDDING_DIMENSIONS: '64' },
  });
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 300_000 });
  const rows: string[][] = [];
  try {
    const ingest = async (kb: string, subset: typeof passages) => {
      for (const f of files(subset)) await client.uploadDocument({ knowledgeBase: kb, filename: f.filename, sourceUri: f.sourceUri }, f.data);
      await waitForIndexed(client, kb);
    };
    const usage = async (kb: string) => (await client.getKnowledgeBase(kb)).llmUsage!;
    const measure = async (label: string, kb: string, subset: typeof passages) => {
      const started = performance.now();
      const estimate = await client.estimateIngest(kb, files(subset));
      const estimateMs = performance.now() - started;
      const before = await usage(kb);
      const fakeBefore = { ...counted };
      await ingest(kb, subset);
      const after = await usage(kb);
      const actual = after.inputTokens + after.outputTokens - before.inputTokens - before.outputTokens;
      const fakeCounted = counted.prompt + counted.completion - fakeBefore.prompt - fakeBefore.completion;
      const e = estimate;
      const estimated = e.extraction!.inputTokens + e.extraction!.outputTokens + e.summaries!.inputTokens + e.summaries!.outputTokens;
      rows.push([
        label,
        String(subset.length),
        String(e.chunks),
        `${e.extraction!.calls} + ${e.summaries!.calls}`,
        `${after.calls - before.calls}`,
        String(e.extraction!.inputTokens),
        String(after.inputTokens - before.inputTokens),
        String(estimated),
        String(actual),
        actual === 0 ? (estimated === 0 ? 'exact' : 'n/a') : pct(estimated / actual),
        String(fakeCounted),
        `$${e.totalCostUsd.toFixed(4)} / $${(after.estimatedCostUsd - before.estimatedCostUsd).toFixed(4)}`,
        `${(estimateMs / 1000).toFixed(1)} s`,
      ]);
      console.log(rows.at(-1)!.join(' | '), `\n  basis: ${e.outputBasis}`);
    };
    await client.createKnowledgeBase({ name: 'fresh' });
    await measure('whole corpus, fresh knowledge base (default output ratio)', 'fresh', passages);
    await client.createKnowledgeBase({ name: 'copy' });
    await measure('the same corpus into a second knowledge base, same prompt (extraction cache)', 'copy', passages);
    // Its own prompt, so that the extraction cache of the runs above does not apply.
    await client.createKnowledgeBase({ name: 'sampled', extraction: { entityTypes: [], instructions: 'Prefer the full names of people, places and works.', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    await ingest('sampled', passages.slice(0, 100));
    await measure('the other passages, after a 100-passage sample', 'sampled', passages.slice(100));
    await measureSampledCli(client, rows);
  } finally {
    client.close();
    await server.dispose();
    await fake.stop();
  }
  console.log(`\nmachine: ${machine()}, load ${loadAverage()}`);
  console.log(`corpus: ${corpusDir} (${passages.length} passages); LLM tokens = input + output of extraction and summary calls, as the fake server reported them (JSON of the messages / 4, reply / 4)`);
  console.log(
    ['run', 'passages', 'est. chunks', 'est. calls (extraction + summaries)', 'actual calls', 'est. extraction input', 'actual input', 'est. LLM tokens', 'actual LLM tokens', 'error', 'fake-counted tokens', 'est. / actual cost', 'estimate took'].join(' | '),
  );
  for (const row of rows) console.log(row.join(' | '));
}

/** The CLI's `--estimate --sample 30` into a fresh knowledge base, then the whole corpus ingested. */
async function measureSampledCli(client: TrellisClient, rows: string[][]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-estimate-'));
  const quiet = () => Object.assign(new PassThrough(), { isTTY: false }) as unknown as NodeJS.WriteStream;
  try {
    for (const p of passages) writeFileSync(join(dir, `${p.id}.txt`), `${p.title}\n${p.text}`);
    // Its own prompt again: none of the runs above may have cached its extractions.
    await client.createKnowledgeBase({ name: 'cli-sampled', extraction: { entityTypes: [], instructions: 'Name people, places and works in full.', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    const printed = quiet();
    let text = '';
    printed.on('data', (d: Buffer) => (text += d.toString()));
    const started = performance.now();
    await estimateCommand(client, 'cli-sampled', [dir], { sampleFiles: 30, timeoutSeconds: 3600 }, printed);
    const tookMs = performance.now() - started;
    const inAll = Number(/in all: ([\d,]+) LLM tokens/.exec(text)![1]!.replace(/,/g, ''));
    const basis = /expected output: (.*)/.exec(text)![1]!;
    await ingestCommand(client, 'cli-sampled', [dir], { wait: true, timeoutSeconds: 3600 }, quiet());
    const spent = (await client.getKnowledgeBase('cli-sampled')).llmUsage!;
    const actual = spent.inputTokens + spent.outputTokens;
    rows.push(['whole corpus, fresh knowledge base, `--estimate --sample 30` (measured + estimated)', String(passages.length), '', '', String(spent.calls), '', String(spent.inputTokens), String(inAll), String(actual), pct(inAll / actual), '', '', `${(tookMs / 1000).toFixed(1)} s (sample indexed)`]);
    console.log(rows.at(-1)!.join(' | '), `\n  basis: ${basis}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

runBench(main);
