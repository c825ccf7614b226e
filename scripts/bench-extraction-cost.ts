// npm run bench:extraction-cost [-- CORPUS_DIR] — what LLM extraction costs per chunk.
// Starts FakeOpenAiServer (a real OpenAI-compatible HTTP server) answering every extraction
// call with plausible graph JSON built from the chunk text, runs the built standalone server
// against it, indexes the corpus with gleaning off, then into a second knowledge base with
// the same prompt (every chunk already in the extraction cache), then re-uploads the unchanged
// corpus, then indexes it once more with gleaning on. Prints chat calls and tokens (as the fake
// server counts them) per chunk for each run.
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import { FakeOpenAiServer, startStandaloneProcess } from '@trellis/testing';
import type { ScriptedReply } from '@trellis/testing';
import { loadAverage, machine, readJsonl, runBench } from './bench-kit.mjs';
import { fakeIndexingAnswer, indexingPurpose, waitForIndexed } from './bench-indexing';
import type { IndexingPurpose as Purpose, Message } from './bench-indexing';

const root = resolve(__dirname, '..');
const corpusDir = resolve(process.argv[2] ?? join(root, '../shared/datasets/hotpotqa-100'));
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;

const usage = { prompt: 0, completion: 0 };
const callsByPurpose: Record<Purpose, number> = { extraction: 0, summary: 0, merge: 0 };

const fake = new FakeOpenAiServer(64);
fake.respondWith((request): ScriptedReply => {
  const messages = request.messages as Message[];
  const purpose = indexingPurpose(messages);
  callsByPurpose[purpose] += 1;
  const content = fakeIndexingAnswer(messages, purpose);
  // The same counts the fake server reports as usage.
  usage.prompt += Math.ceil(JSON.stringify(messages).length / 4);
  usage.completion += Math.ceil(content.length / 4);
  return { kind: 'content', content };
});

async function main(): Promise<void> {
  const baseUrl = await fake.start();
  const server = await startStandaloneProcess({
    env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'bench', TRELLIS_LLM_MODEL: 'gpt-4o-mini', TRELLIS_EMBEDDING_MODEL: 'fake-embed', TRELLIS_EMBEDDING_DIMENSIONS: '64' },
  });
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 120_000 });
  const rows: string[][] = [];
  try {
    const measure = async (label: string, kb: string, work: () => Promise<void>) => {
      const calls = fake.chatRequests().length;
      const purposes = { ...callsByPurpose };
      const before = { ...usage };
      const started = performance.now();
      await work();
      const chunks = await waitForIndexed(client, kb);
      const seconds = (performance.now() - started) / 1000;
      const chat = fake.chatRequests().length - calls;
      const byPurpose = (Object.keys(callsByPurpose) as Purpose[]).map((p) => `${p} ${callsByPurpose[p] - purposes[p]}`).join(', ');
      const prompt = usage.prompt - before.prompt;
      const completion = usage.completion - before.completion;
      const kbUsage = (await client.getKnowledgeBase(kb)).llmUsage!;
      const per = (n: number) => (chunks === 0 ? '-' : (n / chunks).toFixed(2));
      rows.push([label, String(chunks), `${chat} (${byPurpose})`, per(chat), per(prompt), per(completion), String(kbUsage.cacheHits), `$${kbUsage.estimatedCostUsd.toFixed(4)}`, `${seconds.toFixed(1)} s`]);
      console.log(rows.at(-1)!.join(' | '));
    };
    const upload = (kb: string) => async () => {
      for (const p of passages) await client.uploadDocument({ knowledgeBase: kb, filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
    };
    const run = async (label: string, kb: string, gleaningPasses: number, create = true) => {
      if (create) {
        await client.createKnowledgeBase({ name: kb, extraction: { entityTypes: [], instructions: '', examples: '', gleaningPasses, outputMode: 'auto' } });
      }
      await measure(label, kb, upload(kb));
    };
    await run('gleaning off', 'cost', 0);
    await run('same corpus, second KB, same prompt (cache)', 'cost-copy', 0);
    await run('re-upload of the unchanged corpus', 'cost', 0, false);
    await measure('reindex of the whole KB (ReindexKnowledgeBase)', 'cost', async () => {
      await client.reindexKnowledgeBase('cost');
    });
    await run('gleaning on', 'cost-glean', 1);
  } finally {
    client.close();
    await server.dispose();
    await fake.stop();
  }
  console.log(`\nmachine: ${machine()}, load ${loadAverage()}`);
  console.log(`corpus: ${corpusDir} (${passages.length} passages); tokens as the fake server counts them (JSON of the messages / 4, reply / 4); cost at gpt-4o-mini list prices`);
  console.log(['run', 'chunks', 'chat calls', 'calls/chunk', 'prompt tok/chunk', 'completion tok/chunk', 'KB cache hits', 'KB est. cost', 'time'].join(' | '));
  for (const row of rows) console.log(row.join(' | '));
}

runBench(main);
