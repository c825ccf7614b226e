import { readFile } from 'node:fs/promises';
import type { v1 } from '@trellis/contracts';
import type { TrellisClient } from '@trellis/client';
import { expandPaths } from './files';
import { budgetSummary } from './budget-options';
import { table } from './output';

/** File bytes per EstimateIngest request: well inside gRPC's 16 MiB message limit. */
const REQUEST_BYTES = 8 * 1024 * 1024;

const OUTCOME_MARK: Record<string, string> = { new: '+', changed: '~', unchanged: '=', unparseable: '✗' };

/**
 * `trellis ingest --estimate`: what ingesting the files would cost, without uploading them. The
 * files go to EstimateIngest in requests of at most 8 MB; their answers are added up (a text
 * repeated across two requests is then counted twice). Exit code 1 when a file is unparseable.
 */
export async function estimateCommand(client: TrellisClient, kb: string, inputs: string[], out: NodeJS.WriteStream): Promise<number> {
  if (inputs.some((i) => /^https?:\/\//i.test(i))) throw new Error('--estimate takes files and directories, not URLs or sites');
  const { files, skipped } = await expandPaths(inputs);
  if (files.length === 0) throw new Error('no files to estimate');
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
  const total = sumEstimates(estimates);
  out.write(renderEstimate(kb, total, files.map((f) => f.display)));
  if (skipped.length > 0) out.write(`skipped ${skipped.length} file(s) of unsupported type\n`);
  return total.files.some((f) => f.outcome === 'unparseable') ? 1 : 0;
}

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
export function renderEstimate(kb: string, e: v1.IngestEstimate, names: readonly string[]): string {
  const counts = (outcome: string) => e.files.filter((f) => f.outcome === outcome).length;
  const lines = [
    `estimate for ingesting ${e.files.length} file(s) into ${kb}: nothing was stored or sent to a model`,
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
