import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, fakeProviderEnv, graphJson, startStandaloneProcess, waitFor } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { grpcCode, trellis, waitUntilIndexed } from './helpers';

/**
 * What indexing costs, before and during: EstimateIngest against what ingesting then spends with
 * the fake OpenAI-compatible model, and a knowledge-base budget pausing LLM extraction until it
 * is raised. The corpus is generated here: passages about invented people, places and works, as
 * the fake model turns capitalised phrases into entities.
 */
const FIRST = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Elena', 'Farid', 'Greta', 'Hugo', 'Ines', 'Jonas', 'Kaito', 'Leona', 'Mateo', 'Nadia', 'Oskar', 'Priya', 'Quentin', 'Rosa', 'Stefan', 'Talia'];
const LAST = ['Marlow', 'Castell', 'Velde', 'Olsen', 'Frost', 'Nassar', 'Lindqvist', 'Bramante', 'Carvalho', 'Weller', 'Okafor', 'Haldane', 'Ruiz', 'Petrov', 'Sato', 'Brandt', 'Moreau', 'Quinn', 'Ivers', 'Dallow', 'Keane', 'Sorel', 'Tamm'];
const PLACES = ['Port Avalon', 'Lake Mirren', 'North Calder', 'Vessa Bay', 'Old Harwick', 'Serra Alta', 'Tamsin Falls', 'Ulm Crossing', 'Kestrel Point', 'Marrow Fen', 'Ostrava Heights', 'Lindon Vale'];
const WORKS = ['Glass', 'Harbor', 'Winter', 'Lantern', 'Ferry', 'Atlas', 'Orchard', 'Meridian', 'Tide', 'Compass', 'Ember', 'Quarry'];

/** Subject i of the corpus: distinct for the 460 first, as an encyclopedia's entries are. */
const person = (i: number) => `${FIRST[i % FIRST.length]} ${LAST[(i * 7 + Math.floor(i / FIRST.length)) % LAST.length]}`;

/**
 * A deterministic passage of four to seven sentences about one invented writer, like a short
 * encyclopedia entry: its subject is its own, the places, works and other writers it names recur
 * across the corpus as they would in a real one.
 */
function passage(i: number): { id: string; text: string } {
  const at = (list: readonly string[], k: number) => list[(i * 5 + k * 3) % list.length]!;
  const work = (k: number) => `The ${at(WORKS, k)} ${at(WORKS, k + 1)}`;
  const subject = person(i);
  const sentences = [
    `${subject} (born ${1900 + ((i * 13) % 90)}) is a writer from ${at(PLACES, 1)}.`,
    `In ${1920 + ((i * 5) % 80)} ${subject} published ${work(2)}, a novel set in ${at(PLACES, 3)}.`,
    `The book was adapted for the stage by ${person(i + 37)} and toured ${at(PLACES, 5)} and ${at(PLACES, 6)}.`,
    `Critics compared it with ${work(7)} by ${person(i + 101)}.`,
    `Later ${subject} taught literature at the University of ${at(PLACES, 9)} for ${3 + (i % 20)} years.`,
    `A museum in ${at(PLACES, 10)} keeps the letters of ${subject}.`,
    `The ${at(PLACES, 12)} Prize went to ${work(4)} in ${2000 + (i % 24)}.`,
  ].slice(0, 4 + (i % 4));
  return { id: `p${String(i).padStart(3, '0')}`, text: `${subject}\n${sentences.join(' ')}` };
}

type Message = { role: string; content: string };
const asFiles = (passages: ReadonlyArray<{ id: string; text: string }>): v1.EstimateFile[] =>
  passages.map((p) => ({ filename: `${p.id}.txt`, mimeType: '', sourceUri: p.id, data: Buffer.from(p.text) }));
const llmTokens = (e: v1.IngestEstimate) => e.extraction!.inputTokens + e.extraction!.outputTokens + e.summaries!.inputTokens + e.summaries!.outputTokens;

describe('ingest cost: EstimateIngest and knowledge-base LLM budgets (standalone, fake OpenAI-compatible model)', () => {
  const fake = new FakeOpenAiServer(64);
  let server: StandaloneProcess;
  let client: TrellisClient;

  beforeAll(async () => {
    fake.respondWith((request) => {
      const messages = request.messages as Message[];
      if (messages[0]!.content.startsWith('You merge descriptions')) return { kind: 'content', content: messages[1]!.content.slice(0, 400) };
      return { kind: 'content', content: graphJson(messages[1]!.content) };
    });
    server = await startStandaloneProcess({
      env: fakeProviderEnv(await fake.start(), 64, {
        TRELLIS_METRICS_NAMES: 'true',
        TRELLIS_LLM_PRICES: 'fake-model=0.15:0.6',
        TRELLIS_BUDGET_RESUME_INTERVAL_MS: '200',
      }),
    });
    client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 120_000 });
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await fake.stop();
  });

  async function ingest(kb: string, passages: ReadonlyArray<{ id: string; text: string }>): Promise<v1.Document[]> {
    const ids: string[] = [];
    for (const f of asFiles(passages)) ids.push((await client.uploadDocument({ knowledgeBase: kb, filename: f.filename, sourceUri: f.sourceUri }, f.data)).id);
    return waitUntilIndexed(client, kb, ids, 180_000);
  }

  it('estimates the extraction tokens ingesting then spends within 10 %, before anything is stored or sent', async () => {
    await client.createKnowledgeBase({ name: 'estimated' });
    // A first sample: what the knowledge base's extraction calls return is learnt from it.
    await ingest('estimated', Array.from({ length: 30 }, (_, i) => passage(i)));
    const rest = Array.from({ length: 60 }, (_, i) => passage(30 + i));
    const callsBefore = fake.chatRequests().length;
    const documentsBefore = (await client.getKnowledgeBase('estimated')).documentCount;
    const estimate = await client.estimateIngest('estimated', asFiles(rest));
    expect(fake.chatRequests().length).toBe(callsBefore);
    expect((await client.getKnowledgeBase('estimated')).documentCount).toBe(documentsBefore);
    expect(estimate.outputBasis).toMatch(/^measured on this knowledge base's \d+ extraction calls/);
    expect(estimate.files.map((f) => f.outcome)).toEqual(rest.map(() => 'new'));
    expect(estimate.extraction!.calls).toBe(estimate.chunks);
    expect(estimate.llmModel).toBe('fake-model');
    expect(estimate.extraction!.estimatedCostUsd).toBeCloseTo((estimate.extraction!.inputTokens * 0.15 + estimate.extraction!.outputTokens * 0.6) / 1e6, 9);
    expect(estimate.embeddings!.inputTokens).toBeGreaterThan(0);

    const before = (await client.getKnowledgeBase('estimated')).llmUsage!;
    const documents = await ingest('estimated', rest);
    const after = (await client.getKnowledgeBase('estimated')).llmUsage!;
    const actual = after.inputTokens + after.outputTokens - before.inputTokens - before.outputTokens;
    const chunks = documents.filter((d) => rest.some((p) => p.id === d.sourceUri)).reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0);
    const calls = fake.chatRequests().slice(callsBefore);
    const summaryCalls = calls.filter((r) => (r.body.messages as Message[])[0]!.content.startsWith('You merge descriptions')).length;
    console.log(
      `estimate: ${llmTokens(estimate)} LLM tokens for ${estimate.chunks} chunks (extraction ${estimate.extraction!.inputTokens} in / ${estimate.extraction!.outputTokens} out, ` +
        `${estimate.summaries!.calls} summaries ${estimate.summaries!.inputTokens} in / ${estimate.summaries!.outputTokens} out); ` +
        `spent: ${actual} tokens (${after.inputTokens - before.inputTokens} in / ${after.outputTokens - before.outputTokens} out) in ${calls.length} calls, ${summaryCalls} of them summaries, for ${chunks} chunks ` +
        `(${((llmTokens(estimate) / actual - 1) * 100).toFixed(1)} %); basis: ${estimate.outputBasis}`,
    );
    expect(estimate.chunks).toBe(chunks);
    // Extraction calls as the fake provider counted them: the JSON of the messages / 4 in, the reply / 4 out.
    const extractionCalls = calls.filter((r) => !(r.body.messages as Message[])[0]!.content.startsWith('You merge descriptions'));
    const spentOnExtraction = extractionCalls.reduce((n, r) => {
      const messages = r.body.messages as Message[];
      return n + Math.ceil(JSON.stringify(messages).length / 4) + Math.ceil(graphJson(messages[1]!.content).length / 4);
    }, 0);
    console.log(`extraction: estimated ${estimate.extraction!.inputTokens + estimate.extraction!.outputTokens} tokens, the fake provider counted ${spentOnExtraction}`);
    expect(extractionCalls).toHaveLength(estimate.extraction!.calls);
    expect(Math.abs((estimate.extraction!.inputTokens + estimate.extraction!.outputTokens) / spentOnExtraction - 1)).toBeLessThan(0.1);
    expect(Math.abs(estimate.totalCostUsd - estimate.extraction!.estimatedCostUsd - estimate.summaries!.estimatedCostUsd - estimate.embeddings!.estimatedCostUsd)).toBeLessThan(1e-12);
  });

  it('counts indexed files and cached chunks as free', async () => {
    const held = passage(3);
    const estimate = await client.estimateIngest('estimated', [
      ...asFiles([held]),
      // The same text under another source: a new document whose chunk is in the extraction cache.
      { filename: 'copy.txt', mimeType: '', sourceUri: 'copy', data: Buffer.from(held.text) },
    ]);
    expect(estimate.files.map((f) => f.outcome)).toEqual(['unchanged', 'new']);
    expect(estimate.extraction).toMatchObject({ calls: 0, inputTokens: 0, cacheHits: 1 });
    expect(estimate.summaries!.calls).toBe(0);
  });

  it('pauses LLM extraction at the budget (paused: budget), shows it in status and metrics, and finishes once it is raised', async () => {
    const created = await client.createKnowledgeBase({ name: 'budgeted', llmBudget: { dailyTokens: 1, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 } });
    expect(created.budget?.budget).toMatchObject({ dailyTokens: 1 });
    await ingest('budgeted', [passage(200)]);
    await waitFor(async () => (await client.getKnowledgeBase('budgeted')).budget?.exhausted !== '' || undefined, 10_000, 'the budget to be spent');
    // Extraction reads a budget's spend at most once a second: the next chunk sees it spent.
    await new Promise((r) => setTimeout(r, 1100));
    const waiting = await client.uploadDocument({ knowledgeBase: 'budgeted', filename: 'later.txt', sourceUri: 'later' }, Buffer.from(passage(201).text));
    const paused = await waitFor(
      async () => {
        const d = await client.getDocument('budgeted', waiting.id);
        return d.statusDetail.startsWith('paused: budget') ? d : undefined;
      },
      30_000,
      'the document to be paused by the budget',
    );
    expect(paused.status).not.toBe('INDEX_STATUS_GRAPHED');
    expect(paused.statusDetail).toMatch(/^paused: budget \(1 chunk wait: daily token budget of 1 reached; resumes when the budget is raised or at \d{4}-\d\d-\d\dT00:00:00\.000Z\)$/);
    // The progress a client polls tells the same, without the document's stages.
    expect((await client.getIndexingProgress('budgeted', [waiting.id])).documents).toMatchObject([{ id: waiting.id, statusDetail: paused.statusDetail }]);
    const kb = await client.getKnowledgeBase('budgeted');
    expect(kb.budget).toMatchObject({ exhausted: 'daily token budget of 1 reached', pausedChunks: 1 });
    expect(kb.budget!.today!.tokens).toBeGreaterThan(1);
    expect(kb.budget!.thisMonth!.tokens).toBe(kb.budget!.today!.tokens);
    const cli = await trellis(['--server', server.grpcAddress, 'status', 'budgeted']);
    expect(cli.stdout).toContain('paused: budget');
    expect(cli.stdout).toMatch(/LLM budget: today [\d,]+ of 1 tokens.*PAUSED: daily token budget of 1 reached/);
    await waitFor(async () => /trellis_llm_budget_paused_chunks\{knowledge_base="budgeted"[^}]*\} 1/.test(await (await fetch(`${server.httpUrl}/metrics`)).text()), 10_000, 'the paused-chunk gauge');
    const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/trellis_llm_budget_limit\{knowledge_base="budgeted",period="day",unit="tokens"[^}]*\} 1\n/);
    expect(metrics).toMatch(/trellis_llm_budget_pauses_total\{knowledge_base="budgeted"[^}]*\} [1-9]/);
    const spent = /trellis_llm_budget_spent\{knowledge_base="budgeted",period="day",unit="tokens"[^}]*\} (\d+)/.exec(metrics);
    expect(Number(spent?.[1])).toBeGreaterThan(1);
    // Waiting, not stuck: still paused a few resume intervals later.
    await new Promise((r) => setTimeout(r, 600));
    expect((await client.getDocument('budgeted', waiting.id)).statusDetail).toMatch(/^paused: budget/);

    // The CLI stops following documents that wait for the budget, and says why.
    const dir = mkdtempSync(join(tmpdir(), 'trellis-budget-'));
    try {
      writeFileSync(join(dir, 'third.txt'), passage(202).text);
      const cli = await trellis(['--server', server.grpcAddress, 'ingest', 'budgeted', join(dir, 'third.txt'), '--timeout', '60']);
      expect(cli.stdout).toContain("1 document(s) wait for the knowledge base's LLM budget: paused: budget (1 chunk wait: daily token budget of 1 reached;");
      expect(cli.stdout).toContain('raise it with `trellis kb update budgeted --daily-tokens N`');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const raised = await client.updateKnowledgeBase({ knowledgeBase: 'budgeted', llmBudget: { dailyTokens: 10_000_000, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 } });
    expect(raised.budget?.exhausted).toBe('');
    const [done] = await waitUntilIndexed(client, 'budgeted', [waiting.id], 30_000);
    expect(done!.statusDetail).toBe('');
    await waitFor(async () => (await client.listAllDocuments('budgeted')).every((d) => d.status === 'INDEX_STATUS_GRAPHED') || undefined, 30_000, 'every budgeted document to finish');
    expect(done!.llmUsage!.calls).toBeGreaterThan(0);
    expect((await client.getKnowledgeBase('budgeted')).budget?.pausedChunks).toBe(0);
  });

  it('with --sample, ingests a spread of the files first and estimates the rest from what the model returned for them', async () => {
    // A knowledge base with its own prompt: nothing cached, nothing measured yet.
    await client.createKnowledgeBase({ name: 'sampled', extraction: { entityTypes: [], instructions: 'Name every writer in full.', examples: '', gleaningPasses: 0, outputMode: 'auto' } });
    const dir = mkdtempSync(join(tmpdir(), 'trellis-sample-'));
    try {
      const passages = Array.from({ length: 80 }, (_, i) => passage(500 + i));
      for (const p of passages) writeFileSync(join(dir, `${p.id}.txt`), p.text);
      const refused = await trellis(['--server', server.grpcAddress, 'ingest', 'sampled', dir, '--estimate', '--sample', '80']);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('--sample 80 would ingest every one of the 80 file(s)');
      expect((await client.getKnowledgeBase('sampled')).documentCount).toBe(0);

      const printed = await trellis(['--server', server.grpcAddress, 'ingest', 'sampled', dir, '--estimate', '--sample', '24']);
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain('sample: ingesting 24 file(s) for real');
      expect(printed.stdout).toContain('into sampled: apart from the sample above, nothing was stored or sent to a model');
      expect(printed.stdout).toContain('expected output: measured on this knowledge base');
      expect(printed.stdout).toContain('24 unchanged (already indexed)');
      const kb = await client.getKnowledgeBase('sampled');
      expect(kb.documentCount).toBe(24);
      // Spread over the list, not its first files.
      const sampled = (await client.listAllDocuments('sampled')).map((d) => d.sourceUri).sort();
      expect(sampled[0]!.endsWith(`/${passages[0]!.id}.txt`)).toBe(true);
      expect(sampled.at(-1)!.endsWith(`/${passages[76]!.id}.txt`)).toBe(true);
      // What the sample spent is what the knowledge base recorded for it.
      expect(printed.stdout).toContain(`the sample (24 file(s), indexed): ${kb.llmUsage!.calls} LLM calls, ${(kb.llmUsage!.inputTokens + kb.llmUsage!.outputTokens).toLocaleString('en-US')} LLM tokens`);
      const row = /extraction\s+fake-model\s+(\d+)\s+([\d,]+)\s+([\d,]+)/.exec(printed.stdout)!;
      const [calls, estimatedIn, estimatedOut] = row.slice(1).map((n) => Number(n.replace(/,/g, '')));
      const inAll = Number(/in all: ([\d,]+) LLM tokens/.exec(printed.stdout)![1]!.replace(/,/g, ''));

      const callsBefore = fake.chatRequests().length;
      await trellis(['--server', server.grpcAddress, 'ingest', 'sampled', dir]);
      const spent = (await client.getKnowledgeBase('sampled')).llmUsage!;
      const extractionCalls = fake.chatRequests().slice(callsBefore).filter((r) => !(r.body.messages as Message[])[0]!.content.startsWith('You merge descriptions'));
      const extractionTokens = extractionCalls.reduce((n, r) => {
        const messages = r.body.messages as Message[];
        return n + Math.ceil(JSON.stringify(messages).length / 4) + Math.ceil(graphJson(messages[1]!.content).length / 4);
      }, 0);
      console.log(
        `--sample 24 of 80: extraction of the rest estimated ${estimatedIn! + estimatedOut!} tokens, the fake provider counted ${extractionTokens}; ` +
          `in all ${inAll} LLM tokens (measured + estimated), ${spent.inputTokens + spent.outputTokens} spent (${((inAll / (spent.inputTokens + spent.outputTokens) - 1) * 100).toFixed(1)} %: summaries grow with the graph)`,
      );
      expect(extractionCalls).toHaveLength(calls!);
      expect(Math.abs((estimatedIn! + estimatedOut!) / extractionTokens - 1)).toBeLessThan(0.1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const alone = await trellis(['--server', server.grpcAddress, 'ingest', 'sampled', '--sample', '3', '/nonexistent']);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('--sample goes with --estimate');
  });

  it('prints the estimate as a table from the CLI, and refuses bad input with a reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trellis-estimate-'));
    try {
      writeFileSync(join(dir, 'a.txt'), passage(300).text);
      writeFileSync(join(dir, 'b.md'), `# Notes\n\n${passage(301).text}`);
      const printed = await trellis(['--server', server.grpcAddress, 'ingest', 'estimated', dir, '--estimate']);
      expect(printed.code).toBe(0);
      expect(printed.stdout).toContain('estimate for ingesting 2 file(s) into estimated: nothing was stored or sent to a model');
      expect(printed.stdout).toMatch(/WORK\s+MODEL\s+CALLS\s+INPUT TOKENS\s+OUTPUT TOKENS\s+CACHE HITS\s+EST\. COST/);
      expect(printed.stdout).toMatch(/extraction\s+fake-model\s+2\s+[\d,]+\s+[\d,]+\s+0\s+\$0\.\d+/);
      expect(printed.stdout).toContain('expected output: measured on this knowledge base');
      const empty = await trellis(['--server', server.grpcAddress, 'ingest', 'estimated', '--estimate']);
      expect(empty.code).toBe(1);
      expect(empty.stderr).toContain('give the files or directories to estimate');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(await grpcCode(client.estimateIngest('estimated', []))).toEqual({ code: status.INVALID_ARGUMENT, details: 'no files to estimate: give at least one' });
    expect(await grpcCode(client.estimateIngest('nowhere', asFiles([passage(1)])))).toMatchObject({ code: status.NOT_FOUND, details: expect.stringContaining('nowhere') });
    const negative = { dailyTokens: -5, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: -1 };
    expect(await grpcCode(client.updateKnowledgeBase({ knowledgeBase: 'budgeted', llmBudget: negative }))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'llm_budget.daily_tokens must be 0 (no limit) or more (got -5); llm_budget.monthly_usd must be 0 (no limit) or more (got -1)',
    });
    expect(await grpcCode(client.createKnowledgeBase({ name: 'neg', llmBudget: negative }))).toMatchObject({ code: status.INVALID_ARGUMENT });
    expect(await grpcCode(client.updateKnowledgeBase({ knowledgeBase: 'nowhere', llmBudget: { dailyTokens: 5, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 } }))).toMatchObject({ code: status.NOT_FOUND });
    // The same estimate over REST, bytes as base64.
    const rest = await fetch(`${server.httpUrl}/api/v1/knowledge-bases/estimated/estimate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ files: [{ filename: 'r.txt', data: Buffer.from(passage(400).text).toString('base64') }] }),
    });
    expect(rest.status).toBe(200);
    const body = (await rest.json()) as { chunks: number; extraction: { calls: string | number } };
    expect(body.chunks).toBe(1);
    expect(Number(body.extraction.calls)).toBe(1);
    const refused = await fetch(`${server.httpUrl}/api/v1/knowledge-bases/estimated/estimate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"files": []}' });
    expect(refused.status).toBe(400);
  });
});
