import { parseCorpus, parseQuestions, retrievePassages, summarize } from '@trellis/evaluation';
import type { EvalPassage, EvalQuestion, EvalSummary } from '@trellis/evaluation';
import { createKnowledgeBase, listAllDocuments, retrieveChunks, uploadText } from '../../api/trellis';
import { isSettled } from '../../api/types';

/** The run that names no mode, so it measures what the server does by default (as `trellis eval --mode default`). */
export const DEFAULT_MODE = 'default';
const INDEXING_TIMEOUT_MS = 15 * 60_000;
const POLL_MS = 1000;

export interface EvaluationInput {
  /** The gold corpus, when it is to be ingested into a new knowledge base; else `knowledgeBase` is evaluated as indexed. */
  readonly corpus?: { readonly name: string; readonly text: string };
  readonly questions: { readonly name: string; readonly text: string };
  readonly knowledgeBase: string;
  readonly modes: readonly string[];
  readonly ks: readonly number[];
}

export interface EvaluationRun {
  readonly mode: string;
  readonly summary: EvalSummary;
}

/**
 * `trellis eval` over the REST API: the same file formats and metrics (@trellis/evaluation),
 * with RetrieveChunks per question and mode. Reports what it is doing through `progress`.
 */
export async function runEvaluation(input: EvaluationInput, progress: (message: string) => void, signal: AbortSignal): Promise<{ knowledgeBase: string; questions: number; runs: EvaluationRun[] }> {
  const passages = input.corpus ? parseCorpus(input.corpus.name, input.corpus.text) : undefined;
  const questions = parseQuestions(input.questions.name, input.questions.text, passages ? new Set(passages.map((p) => p.id)) : undefined);
  const kb = passages ? await ingest(passages, progress, signal) : input.knowledgeBase;
  await waitForIndexing(kb, progress, signal);
  const maxK = Math.max(...input.ks);
  const runs: EvaluationRun[] = [];
  for (const mode of input.modes) {
    const results = [];
    for (const [i, q] of questions.entries()) {
      signal.throwIfAborted();
      progress(`${mode}: question ${i + 1} of ${questions.length}`);
      results.push(await retrieveFor(kb, q, mode, maxK, signal));
    }
    runs.push({ mode, summary: summarize(results, input.ks) });
  }
  return { knowledgeBase: kb, questions: questions.length, runs };
}

function retrieveFor(kb: string, q: EvalQuestion, mode: string, k: number, signal: AbortSignal) {
  const requested = mode === DEFAULT_MODE ? {} : { mode };
  return retrievePassages((topK) => retrieveChunks(kb, { query: q.question, topK, ...requested }, signal), q, k, () => performance.now());
}

async function ingest(passages: readonly EvalPassage[], progress: (message: string) => void, signal: AbortSignal): Promise<string> {
  const name = `eval-${new Date().toISOString().replace(/[-:.TZ]/g, '').slice(0, 14)}`;
  await createKnowledgeBase({ name, description: 'console evaluation corpus', chunking: {}, models: {} });
  for (const [i, p] of passages.entries()) {
    signal.throwIfAborted();
    progress(`uploading passage ${i + 1} of ${passages.length} into ${name}`);
    await uploadText(name, `${p.id}.txt`, p.id, p.title ? `${p.title}\n${p.text}` : p.text, p.title ? { title: p.title } : {});
  }
  return name;
}

async function waitForIndexing(kb: string, progress: (message: string) => void, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + INDEXING_TIMEOUT_MS;
  for (;;) {
    signal.throwIfAborted();
    const documents = await listAllDocuments(kb);
    if (documents.length === 0) throw new Error(`knowledge base ${kb} has no documents: add the corpus file to ingest it`);
    const pending = documents.filter((d) => !isSettled(d.status)).length;
    if (pending === 0) return;
    if (Date.now() > deadline) throw new Error(`still indexing after ${INDEXING_TIMEOUT_MS / 60_000} minutes: ${pending} document(s) pending in ${kb}`);
    progress(`waiting for ${pending} of ${documents.length} document(s) to be indexed`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
