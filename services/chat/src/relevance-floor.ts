import type { v1 } from '@trellis/contracts';

/**
 * Least cosine similarity between the question and its best chunk for a knowledge base to
 * have something on the question, per embedding model. Measured with the model over
 * datasets/nestjs-docs and hotpotqa-100 (chunked as ingested): the best chunk of every one of
 * the 147 real questions scored at least 0.293 against its own corpus, while the other
 * corpus's questions and ten general ones ("What is the capital of France?") scored at most
 * 0.218 over the NestJS docs and 0.481 over HotpotQA (median 0.12 and 0.21). At 0.25 no real
 * question is refused and 154 of the 167 off-topic ones are. The hash embedder has no such
 * gap (real and off-topic questions overlap over 0.05–0.24), so it has no floor.
 */
const FLOORS: Readonly<Record<string, number>> = {
  'local:all-MiniLM-L6-v2': 0.25,
};

/** The floor for the embedding model chat's hits were scored with; undefined when none is calibrated. */
export function relevanceFloorFor(embeddingModel: string): number | undefined {
  return FLOORS[embeddingModel];
}

/**
 * Whether the hits fall below the floor: the best dense similarity of a hit to the question
 * (its `vector` signal; `refined` is the rewritten question's) is under it. Hits with no
 * dense signal at all give no evidence, and pass.
 */
export function belowRelevanceFloor(hits: readonly v1.ChunkHit[], floor: number | undefined): boolean {
  if (floor === undefined || hits.length === 0) return false;
  const dense = hits.flatMap((hit) => hit.signals.filter((s) => s.source === 'vector').map((s) => s.score));
  return dense.length > 0 && Math.max(...dense) < floor;
}

/** The answer when nothing relevant was found: says so, and lists the closest sources, cited. */
export function nothingRelevantAnswer(hits: readonly v1.ChunkHit[], shown = 3): string {
  const closest = hits.slice(0, shown).map((hit, i) => `[${i + 1}] ${hit.sourceUri}`);
  return `This knowledge base has nothing on that question. The closest sources are ${closest.join(', ')}.`;
}
