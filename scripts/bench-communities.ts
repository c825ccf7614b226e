// npm run bench:communities [-- CORPUS_DIR] [--report-latency-ms N[,M...]] [--repeat R] [--keep-data] — what communities cost: a full
// build against an incremental refresh after one document is re-indexed, and after one is deleted.
// --repeat R runs each latency R times, each in a knowledge base of its own, and ends with the
// median of each change's share of its own run's full build (a 0 ms full build is under a second,
// so one noisy second on a shared machine moves a single run's shares by half).
// Several latencies run side by side in one run, each in a knowledge base of its own (indexed
// anew: a second full build in the same one would reuse every report by its content hash).
// Starts FakeOpenAiServer (a real OpenAI-compatible HTTP server; extraction answers from
// libs/testing's fake-graph-extraction.ts, community reports as JSON), runs the built standalone server
// against it, indexes the corpus, builds the communities (RebuildCommunities), then changes one
// document and waits for the automatic (debounced) refresh. Time is the server's own
// (trellis_community_refresh_duration_seconds); LLM calls are the report calls the fake answered,
// each after N ms (default 0: then time is Trellis' own work alone).
import { join, resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, startStandaloneProcess } from '@trellis/testing';
import type { ScriptedReply } from '@trellis/testing';
import { loadAverage, machine, readJsonl, runBench } from './bench-kit.mjs';
import { fakeIndexingAnswer, waitForIndexed } from './bench-indexing';
import type { Message } from './bench-indexing';

const root = resolve(__dirname, '..');
const args = process.argv.slice(2);
const latencyFlag = args.indexOf('--report-latency-ms');
const reportLatencies = latencyFlag === -1 ? [0] : args.splice(latencyFlag, 2)[1]!.split(',').map(Number);
let reportLatencyMs = 0;
const repeatFlag = args.indexOf('--repeat');
const repeats = repeatFlag === -1 ? 1 : Number(args.splice(repeatFlag, 2)[1]);
const keepFlag = args.indexOf('--keep-data');
const keepData = keepFlag !== -1 && args.splice(keepFlag, 1).length === 1;
const corpusDir = resolve(args[0] ?? join(root, '../shared/datasets/hotpotqa-100'));
const passages = readJsonl(corpusDir, 'corpus.jsonl') as Array<{ id: string; title: string; text: string }>;

let reportCalls = 0;

const fake = new FakeOpenAiServer(64);
fake.respondWith((request): ScriptedReply => {
  const messages = request.messages as Message[];
  const system = messages[0]?.content ?? '';
  if (system.startsWith('You write a report on one community')) {
    reportCalls++;
    const names = [...messages[1]!.content.matchAll(/^- ([^(\n]+) \(/gm)].slice(0, 3).map((m) => m[1]!.trim());
    return { kind: 'content', content: JSON.stringify({ title: names.join(', '), summary: `The group of ${names.join(', ')}.` }), delayMs: reportLatencyMs };
  }
  return { kind: 'content', content: fakeIndexingAnswer(messages) };
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Documents re-indexed, and documents deleted, per knowledge base. */
const CHANGES = 3;

async function main(): Promise<void> {
  const baseUrl = await fake.start();
  const server = await startStandaloneProcess({
    env: { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'bench', TRELLIS_LLM_MODEL: 'gpt-4o-mini', TRELLIS_EMBEDDING_MODEL: 'fake-embed', TRELLIS_EMBEDDING_DIMENSIONS: '64' },
  });
  const client = new TrellisClient({ address: server.grpcAddress, timeoutMs: 600_000 });
  /** Seconds spent in incremental refreshes so far, and how many ran. */
  const refreshTotals = async (): Promise<{ seconds: number; count: number }> => {
    const text = await (await fetch(`${server.httpUrl}/metrics`)).text();
    const sum = (series: string) =>
      [...text.matchAll(new RegExp(`^trellis_community_refresh_duration_seconds_${series}\\{[^}]*kind="incremental"[^}]*\\} (\\S+)$`, 'gm'))].reduce((total, m) => total + Number(m[1]), 0);
    return { seconds: sum('sum'), count: sum('count') };
  };
  const rows: string[][] = [];
  const stats: string[] = [];
  /** Each change's share of its run's full build, for the medians over runs. */
  const shares: Share[] = [];
  try {
    for (const { latency, run } of reportLatencies.flatMap((latency) => Array.from({ length: repeats }, (_, run) => ({ latency, run })))) {
      reportLatencyMs = latency;
      const kb = `communities-${latency}ms${repeats > 1 ? `-run${run + 1}` : ''}`;
      /**
       * Until the automatic refresh has read a graph newer than the last change. Between
       * refreshes only the metrics are polled: a ListCommunities reads the whole graph (to say
       * what is stale), and run while a refresh runs it would share the server's one event loop
       * with it and stretch the refresh being measured.
       */
      const waitForRefresh = async (since: number): Promise<v1.ListCommunitiesResponse> => {
        for (let seen = since; ; ) {
          const { count } = await refreshTotals();
          if (count > seen) {
            seen = count;
            const list = await client.listCommunities(kb);
            if (list.refreshedAt !== '' && list.refreshedAt > list.changedAt && list.communities.every((c) => !c.stale)) return list;
          }
          await sleep(250);
        }
      };
      await client.createKnowledgeBase({ name: kb });
      const indexing = performance.now();
      for (const p of passages) await client.uploadDocument({ knowledgeBase: kb, filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`));
      await waitForIndexed(client, kb);
      console.log(`${kb}: indexed ${passages.length} passages in ${((performance.now() - indexing) / 1000).toFixed(1)} s`);
      const graph = await client.exportGraph(kb);

      const full = await client.rebuildCommunities(kb, false);
      rows.push([`${latency} ms`, `full build (RebuildCommunities; detection nodes per level ${full.redetected.join(' / ')})`, String(full.communities), `${(full.durationMs / 1000).toFixed(2)} s`, String(full.llmCalls), '1', '100 %', '100 %', loadAverage()]);
      const list = await client.listCommunities(kb);
      const incremental = async (label: string, change: () => Promise<void>) => {
        const before = await refreshTotals();
        const calls = reportCalls;
        await change();
        await waitForIndexed(client, kb);
        const after = await waitForRefresh(before.count);
        const totals = await refreshTotals();
        const took = totals.seconds - before.seconds;
        const llm = reportCalls - calls;
        const share = { latency, label, time: took / (full.durationMs / 1000), calls: llm / full.llmCalls };
        shares.push(share);
        rows.push([`${latency} ms`, label, String(after.communities.length), `${took.toFixed(2)} s`, String(llm), String(totals.count - before.count), percent(share.time), percent(share.calls), loadAverage()]);
      };
      // Three documents of each kind, one change (and one refresh) at a time: one document alone
      // says little, as what a change costs depends on where in the graph it lands.
      for (let i = 0; i < CHANGES; i++) {
        const target = passages[Math.floor(passages.length / 2) + i]!;
        await incremental(`re-index one document (${target.id})`, async () => {
          // A new sentence relating the passage's subject to a new entity: the graph really changes.
          const added = ` ${target.title} was later studied by the Trellis Benchmark Society.`;
          await client.uploadDocument({ knowledgeBase: kb, filename: `${target.id}.txt`, sourceUri: target.id }, Buffer.from(`${target.title}\n${target.text}${added}`));
        });
      }
      for (let i = 0; i < CHANGES; i++) {
        const removed = passages[Math.floor(passages.length / 3) + i]!;
        const removedId = (await client.listAllDocuments(kb)).find((d) => d.sourceUri === removed.id)!.id;
        await incremental(`delete one document (${removed.id})`, async () => void (await client.deleteDocument(kb, removedId)));
      }

      const levels = [...new Set(list.communities.map((c) => c.level))].sort();
      const sizes = list.communities.filter((c) => c.level === 0).map((c) => c.size).sort((a, b) => a - b);
      stats.push(
        `${kb}: graph ${graph.entities.length} entities, ${graph.relationships.length} relationships; communities ${list.communities.length} ` +
          `(${levels.map((l) => `level ${l}: ${list.communities.filter((c) => c.level === l).length}`).join(', ')}); ${list.unassignedEntities} entities in none; ` +
          `level-0 sizes: min ${sizes[0]}, median ${sizes[Math.floor(sizes.length / 2)]}, max ${sizes.at(-1)}; largest at the top level: ` +
          list.communities.filter((c) => c.level === levels.at(-1)).sort((a, b) => b.size - a.size).slice(0, 5).map((c) => `${c.title} (${c.size})`).join('; '),
      );
    }
  } finally {
    client.close();
    if (keepData) {
      await server.stop();
      console.log(`data kept in ${server.dataDir}`);
    } else await server.dispose();
    await fake.stop();
  }
  console.log(`\n${stats.join('\n')}`);
  console.log(`\nmachine: ${machine()}`);
  console.log(`corpus: ${corpusDir} (${passages.length} passages); the fake LLM answers report calls after ${reportLatencies.join(' / ')} ms`);
  console.log(['report latency', 'run', 'communities', 'time', 'report LLM calls', 'refreshes', 'time vs full', 'LLM calls vs full', 'load average (1, 5, 15 min)'].join(' | '));
  for (const row of rows) console.log(row.join(' | '));
  if (repeats > 1) {
    console.log(`\nmedian over ${repeats} runs of each change's share of its own run's full build (min–max)`);
    console.log(['report latency', 'run', 'time vs full', 'LLM calls vs full'].join(' | '));
    const spread = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `${percent(sorted[Math.floor(sorted.length / 2)]!)} (${percent(sorted[0]!)}–${percent(sorted.at(-1)!)})`;
    };
    const byChange = new Map<string, Share[]>();
    for (const share of shares) {
      const change = `${share.latency} ms | ${share.label}`;
      byChange.set(change, [...(byChange.get(change) ?? []), share]);
    }
    for (const [change, of] of byChange) console.log([change, spread(of.map((s) => s.time)), spread(of.map((s) => s.calls))].join(' | '));
  }
}

/** A change's cost as a share of its run's full build, in time and in report calls. */
interface Share {
  readonly latency: number;
  readonly label: string;
  readonly time: number;
  readonly calls: number;
}

function percent(share: number): string {
  return `${(100 * share).toFixed(1)} %`;
}

runBench(main);
