import { readFile } from 'node:fs/promises';
import type { v1 } from '@trellis/contracts';
import type { TrellisClient } from '@trellis/client';
import { expandPaths } from './files';
import type { InputFile } from './files';
import { UploadTally, uploadFiles, waitForIndexing } from './ingest-command';
import { budgetSummary } from './budget-options';
import { table } from './output';

/** File bytes per EstimateIngest request: well inside gRPC's 16 MiB message limit. */
const REQUEST_BYTES = 8 * 1024 * 1024;

const OUTCOME_MARK: Record<string, string> = { new: '+', changed: '~', unchanged: '=', unparseable: '✗' };

export interface EstimateOptions {
  /**
   * Files to ingest for real first, spread evenly over the list, so that the estimate of the
   * rest uses what this model returned for them rather than the server's default; 0 for none.
   */
  readonly sampleFiles: number;
  /** How long to wait for the sample's indexing. */
  readonly timeoutSeconds: number;
}

/**
 * `trellis ingest --estimate`: what ingesting the files would cost, without uploading them. The
 * files go to EstimateIngest in requests of at most 8 MB; their answers are added up (a text
 * repeated across two requests is then counted twice). With a sample, its files are ingested
 * and indexed first; the total is what they spent, as the knowledge base recorded it, plus the
 * estimate of the others (the sample's files are then unchanged and cost nothing). Exit code 1
 * when a file is unparseable or a sample file fails.
 */
export async function estimateCommand(client: TrellisClient, kb: string, inputs: string[], options: EstimateOptions, out: NodeJS.WriteStream): Promise<number> {
  if (inputs.some((i) => /^https?:\/\//i.test(i))) throw new Error('--estimate takes files and directories, not URLs or sites');
  const { files, skipped } = await expandPaths(inputs);
  if (files.length === 0) throw new Error('no files to estimate');
  if (options.sampleFiles >= files.length) {
    throw new Error(`--sample ${options.sampleFiles} would ingest every one of the ${files.length} file(s): give fewer, or ingest without --estimate`);
  }
  const sample = options.sampleFiles > 0 ? await ingestSample(client, kb, evenlySpread(files, options.sampleFiles), options.timeoutSeconds, out) : null;
  const total = sumEstimates(await requestEstimates(client, kb, files));
  out.write(renderEstimate(kb, total, files.map((f) => f.display), sample !== null));
  if (sample !== null) out.write(renderSampleTotal(sample, total));
  if (skipped.length > 0) out.write(`skipped ${skipped.length} file(s) of unsupported type\n`);
  return total.files.some((f) => f.outcome === 'unparseable') || (sample?.failures ?? 0) > 0 ? 1 : 0;
}

/** The files' estimate, in requests of at most REQUEST_BYTES. */
async function requestEstimates(client: TrellisClient, kb: string, files: readonly InputFile[]): Promise<v1.IngestEstimate[]> {
  const estimates: v1.IngestEstimate[] = [];
  let batch: v1.EstimateFile[] = [];
  let size = 0;
  for (const file of files) {
    const data = await readFile(file.path);
    if (batch.length > 0 && size + data.byteLength > REQUEST_BYTES) {
      estimates.push(await client.estimateIngest(kb, batch));
      batch = [];
      size = 0;
    }
    batch.push({ filename: file.path, mimeType: '', sourceUri: file.display, data });
    size += data.byteLength;
  }
  estimates.push(await client.estimateIngest(kb, batch));
  return estimates;
}

/** `count` files spread evenly over the list (the first, then every list/count-th), so one folder does not stand for all. */
export function evenlySpread<T>(items: readonly T[], count: number): T[] {
  const step = items.length / count;
  return Array.from({ length: count }, (_, i) => items[Math.floor(i * step)]!);
}

interface SampleSpend {
  readonly files: number;
  readonly failures: number;
  /** What the knowledge base recorded while the sample was indexed. */
  readonly spent: v1.LlmUsage;
}

/** Ingests the sample and waits for it; what it spent is the change in the knowledge base's recorded LLM usage. */
async function ingestSample(client: TrellisClient, kb: string, sample: readonly InputFile[], timeoutSeconds: number, out: NodeJS.WriteStream): Promise<SampleSpend> {
  out.write(`sample: ingesting ${sample.length} file(s) for real to measure what the model returns; they stay in ${kb}\n`);
  const before = (await client.getKnowledgeBase(kb)).llmUsage;
  const tally = new UploadTally(out);
  await uploadFiles(client, kb, sample, tally);
  const failures = tally.failures + (tally.accepted.length > 0 ? await waitForIndexing(client, kb, tally.accepted, timeoutSeconds, out) : 0);
  const after = (await client.getKnowledgeBase(kb)).llmUsage;
  const n = (u: v1.LlmUsage | undefined, k: keyof v1.LlmUsage) => u?.[k] ?? 0;
  const spent: v1.LlmUsage = {
    calls: n(after, 'calls') - n(before, 'calls'),
    inputTokens: n(after, 'inputTokens') - n(before, 'inputTokens'),
    outputTokens: n(after, 'outputTokens') - n(before, 'outputTokens'),
    estimatedCostUsd: n(after, 'estimatedCostUsd') - n(before, 'estimatedCostUsd'),
    cacheHits: n(after, 'cacheHits') - n(before, 'cacheHits'),
  };
  out.write('\n');
  return { files: sample.length, failures, spent };
}

/** The sample's measured spend beside the estimate of the rest, and their sum. */
function renderSampleTotal(sample: SampleSpend, rest: v1.IngestEstimate): string {
  const s = sample.spent;
  const restLlm = lineTokens(rest.extraction) + lineTokens(rest.summaries);
  return [
    `  the sample (${sample.files} file(s), indexed): ${int(s.calls)} LLM calls, ${int(s.inputTokens + s.outputTokens)} LLM tokens, ${usd(s.estimatedCostUsd)} — measured`,
    `  the rest: ${int(restLlm)} LLM tokens, ${usd(rest.totalCostUsd)} — estimated above`,
    `  in all: ${int(s.inputTokens + s.outputTokens + restLlm)} LLM tokens, ${usd(s.estimatedCostUsd + rest.totalCostUsd)}`,
    '',
  ].join('\n');
}

const lineTokens = (l: v1.CostLine | undefined) => (l?.inputTokens ?? 0) + (l?.outputTokens ?? 0);

function addLine(a: v1.CostLine | undefined, b: v1.CostLine | undefined): v1.CostLine {
  const n = (x: v1.CostLine | undefined, k: keyof v1.CostLine) => x?.[k] ?? 0;
  return {
    calls: n(a, 'calls') + n(b, 'calls'),
    inputTokens: n(a, 'inputTokens') + n(b, 'inputTokens'),
    outputTokens: n(a, 'outputTokens') + n(b, 'outputTokens'),
    estimatedCostUsd: n(a, 'estimatedCostUsd') + n(b, 'estimatedCostUsd'),
    cacheHits: n(a, 'cacheHits') + n(b, 'cacheHits'),
  };
}

/** The estimates of several requests as one; budget and basis as the last answer gives them. */
export function sumEstimates(estimates: readonly v1.IngestEstimate[]): v1.IngestEstimate {
  return estimates.reduce((sum, e) => ({
    ...e,
    files: [...sum.files, ...e.files],
    chunks: sum.chunks + e.chunks,
    chunkTokens: sum.chunkTokens + e.chunkTokens,
    extraction: addLine(sum.extraction, e.extraction),
    summaries: addLine(sum.summaries, e.summaries),
    embeddings: addLine(sum.embeddings, e.embeddings),
    totalTokens: sum.totalTokens + e.totalTokens,
    totalCostUsd: sum.totalCostUsd + e.totalCostUsd,
  }));
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(n > 0 && n < 0.0001 ? 6 : 4)}`;

/** The estimate as a table: one row per kind of model work, then files that cost nothing or failed. */
export function renderEstimate(kb: string, e: v1.IngestEstimate, names: readonly string[], sampled = false): string {
  const counts = (outcome: string) => e.files.filter((f) => f.outcome === outcome).length;
  const lines = [
    `estimate for ingesting ${e.files.length} file(s) into ${kb}: ${sampled ? 'apart from the sample above, ' : ''}nothing was stored or sent to a model`,
    `  ${counts('new')} new, ${counts('changed')} changed, ${counts('unchanged')} unchanged (already indexed), ${counts('unparseable')} unparseable`,
    `  ${int(e.chunks)} chunks, ${int(e.chunkTokens)} chunk tokens`,
    '',
  ];
  const row = (name: string, model: string, l: v1.CostLine | undefined) => [
    name,
    model || '-',
    int(l?.calls ?? 0),
    int(l?.inputTokens ?? 0),
    int(l?.outputTokens ?? 0),
    int(l?.cacheHits ?? 0),
    usd(l?.estimatedCostUsd ?? 0),
  ];
  lines.push(
    table([
      ['WORK', 'MODEL', 'CALLS', 'INPUT TOKENS', 'OUTPUT TOKENS', 'CACHE HITS', 'EST. COST'],
      row('extraction', e.llmModel || 'local (no LLM)', e.extraction),
      row('summaries', e.llmModel, e.summaries),
      row('embeddings', e.embeddingModel, e.embeddings),
      ['total', '', '', '', '', '', usd(e.totalCostUsd)],
    ]),
    '',
    `  ${int(e.totalTokens)} tokens in all; expected output: ${e.outputBasis}`,
  );
  if (e.budget) lines.push(`  budget: ${budgetSummary(e.budget)}`);
  if (e.budgetWarning) lines.push(`  warning: ${e.budgetWarning}`);
  const notable = e.files.map((f, i) => ({ f, name: names[i] ?? f.filename })).filter(({ f }) => f.outcome === 'unparseable');
  for (const { f, name } of notable) lines.push(`  ${OUTCOME_MARK[f.outcome]} ${name}  ${f.error}`);
  return `${lines.join('\n')}\n`;
}
