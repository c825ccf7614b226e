import { dedupeRanking } from './retrieval-evaluation';
import type { EvalQuestion, QuestionResult } from './retrieval-evaluation';

/** Most chunks one retrieval call may ask for (RetrieveChunks' top_k limit). */
export const MAX_TOP_K = 1000;

/** One retrieved chunk as the evaluation reads it: the passage it came from (source URI = passage id). */
export interface RetrievedSource {
  readonly sourceUri: string;
}

/**
 * The first k distinct passages for a question. Several chunks of one passage count once, so
 * when the answer holds fewer than k passages it asks again for more chunks. `retrieve` makes
 * one retrieval call for `topK` chunks; `clock` reads milliseconds (performance.now in Node and
 * browsers), and only the retrieval calls are timed.
 */
export async function retrievePassages(
  retrieve: (topK: number) => Promise<readonly RetrievedSource[]>,
  question: EvalQuestion,
  k: number,
  clock: () => number,
): Promise<QuestionResult> {
  let topK = k;
  let latencyMs = 0;
  for (;;) {
    const started = clock();
    const chunks = await retrieve(topK);
    latencyMs += clock() - started;
    const retrieved = dedupeRanking(chunks.map((c) => c.sourceUri));
    if (retrieved.length >= k || chunks.length < topK || topK >= MAX_TOP_K) return { retrieved: retrieved.slice(0, k), gold: question.gold, latencyMs };
    topK = Math.min(MAX_TOP_K, topK * 2);
  }
}
