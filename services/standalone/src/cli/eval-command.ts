import { readFile, writeFile } from 'node:fs/promises';
import { InvalidArgumentError } from 'commander';
import { cpus, totalmem, loadavg } from 'node:os';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { parseCorpus, parseQuestions, retrievePassages, summarize } from '@trellis/evaluation';
import type { EvalPassage, EvalSummary, QuestionResult } from '@trellis/evaluation';
import { table } from './output';

const POLL_MS = 500;
/** Modes whose ranking depends on the graph strategy. */
const GRAPH_MODES = new Set(['graph', 'hybrid']);
/**
 * The run that asks with neither mode nor strategy, so it measures whatever the server uses by
 * default; regression checks follow the default even when it changes.
 */
export const SERVER_DEFAULT_MODE = 'default';

export interface EvalOptions {
  readonly modes: readonly string[];
  readonly ks: readonly number[];
  readonly strategies: readonly string[];
  /** An already indexed KB; when unset the corpus is ingested into a fresh one. */
  readonly kb?: string;
  readonly json?: string;
  readonly timeoutSeconds: number;
}

interface Run {
  readonly mode: string;
  /** Empty for modes the graph strategy does not affect. */
  readonly strategy: string;
  readonly summary: EvalSummary;
  readonly perQuestion: Array<QuestionResult & { id: string }>;
}

/**
 * `trellis eval`: ingests a gold corpus (one document per passage, source URI = passage id)
 * or reuses an indexed KB, runs every question through each mode and strategy with
 * RetrieveChunks, and prints Recall@k, MRR and latency percentiles per run.
 */
export async function evalCommand(client: TrellisClient, corpusFile: string, questionsFile: string, options: EvalOptions, out: NodeJS.WriteStream): Promise<number> {
  const passages = parseCorpus(corpusFile, await readText(corpusFile));
  const questions = parseQuestions(questionsFile, await readText(questionsFile), new Set(passages.map((p) => p.id)));
  const kb = options.kb ?? (await ingestCorpus(client, passages, out));
  await waitForIndexing(client, kb, options.timeoutSeconds, out);

  const maxK = Math.max(...options.ks);
  const runs: Run[] = [];
  await client.retrieveChunks({ knowledgeBase: kb, query: questions[0]!.question, topK: maxK });
  for (const mode of options.modes) {
    for (const strategy of GRAPH_MODES.has(mode) ? options.strategies : ['']) {
      const perQuestion: Run['perQuestion'] = [];
      const requestedMode = mode === SERVER_DEFAULT_MODE ? '' : mode;
      for (const q of questions) {
        const retrieve = async (topK: number) => (await client.retrieveChunks({ knowledgeBase: kb, query: q.question, mode: requestedMode, topK, strategy })).chunks;
        perQuestion.push({ id: q.id, ...(await retrievePassages(retrieve, q, maxK, () => performance.now())) });
      }
      runs.push({ mode, strategy, summary: summarize(perQuestion, options.ks), perQuestion });
    }
  }

  const pct = (n: number) => (100 * n).toFixed(1);
  const header = ['MODE', 'STRATEGY', ...options.ks.map((k) => `R@${k}`), 'MRR', 'P50 MS', 'P95 MS'];
  const rows = runs.map((r) => [
    r.mode,
    r.strategy || (GRAPH_MODES.has(r.mode) || r.mode === SERVER_DEFAULT_MODE ? 'default' : '-'),
    ...options.ks.map((k) => pct(r.summary.recall[k] ?? 0)),
    r.summary.mrr.toFixed(3),
    r.summary.latencyP50Ms.toFixed(1),
    r.summary.latencyP95Ms.toFixed(1),
  ]);
  out.write(`${questions.length} questions, ${passages.length} passages, knowledge base ${kb}\n${table([header, ...rows])}\n`);
  if (options.json) {
    const report = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model ?? '', memoryGb: Math.round(totalmem() / 2 ** 30), loadAverage: loadavg() },
      corpus: corpusFile,
      questions: questionsFile,
      knowledgeBase: kb,
      ks: options.ks,
      runs: runs.map((r) => ({ mode: r.mode, strategy: r.strategy || undefined, ...r.summary, perQuestion: r.perQuestion })),
    };
    await writeFile(options.json, `${JSON.stringify(report, null, 2)}\n`);
    out.write(`per-question results written to ${options.json}\n`);
  }
  return 0;
}

async function ingestCorpus(client: TrellisClient, passages: readonly EvalPassage[], out: NodeJS.WriteStream): Promise<string> {
  const name = `eval-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
  await client.createKnowledgeBase({ name, description: 'trellis eval corpus' });
  out.write(`ingesting ${passages.length} passages into knowledge base ${name}\n`);
  for (const p of passages) {
    await client.uploadDocument({ knowledgeBase: name, filename: `${p.id}.txt`, mimeType: 'text/plain', sourceUri: p.id, metadata: p.title ? { title: p.title } : {} }, Buffer.from(p.title ? `${p.title}\n${p.text}` : p.text));
  }
  return name;
}

/**
 * Waits until every document of the KB is graphed (or failed), so the eval sees the whole
 * index; polls with a few one-document pages (isIndexing), not the whole document list.
 */
async function waitForIndexing(client: TrellisClient, kb: string, timeoutSeconds: number, out: NodeJS.WriteStream): Promise<void> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  if ((await client.listDocuments(kb, { pageSize: 1 })).documents.length === 0) throw new Error(`knowledge base ${kb} has no documents: omit --kb to ingest the corpus`);
  let announced = false;
  while (await client.isIndexing(kb)) {
    if (Date.now() > deadline) throw new Error(`still indexing after ${timeoutSeconds}s: documents are pending in ${kb}`);
    if (!announced) out.write('waiting for the documents to be indexed\n');
    announced = true;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  const failed = (await client.listAllDocuments(kb, 'INDEX_STATUS_FAILED' as unknown as v1.IndexStatus)).length;
  if (failed > 0) out.write(`warning: ${failed} document(s) failed to index; their passages cannot be retrieved\n`);
}

/** Option parser: a comma-separated list drawn from `allowed`, without repeats. */
export function stringList(allowed: readonly string[]) {
  return (value: string): string[] => {
    const items = value.split(',').map((v) => v.trim()).filter(Boolean);
    const bad = items.find((v) => !allowed.includes(v));
    if (items.length === 0 || bad !== undefined) throw new InvalidArgumentError(`use a comma-separated list of ${allowed.join(', ')}`);
    return [...new Set(items)];
  };
}

/** Option parser: comma-separated integers from min to max, sorted, without repeats. */
export function integerList(min: number, max: number) {
  return (value: string): number[] => {
    const items = value.split(',').map((v) => Number(v.trim()));
    if (items.some((n) => !Number.isInteger(n) || n < min || n > max)) throw new InvalidArgumentError(`use comma-separated integers from ${min} to ${max}`);
    return [...new Set(items)].sort((a, b) => a - b);
  };
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
}
