import type { EmbeddingProvider } from '@trellis/models';
import type { HybridWeights } from './chunk-retriever';
import type { GraphStrategy } from './graph-retriever';

/** What a request that names no strategy gets, and how hybrid mode weighs its signals. */
export interface RetrievalDefaults {
  readonly weights: HybridWeights;
  readonly strategy: GraphStrategy;
  /** Whether hybrid's second hop searches by vector beside full text (see ChunkQuery.embed). */
  readonly denseSecondHop: boolean;
}

/**
 * With a semantic embedding model, dense, full-text and graph rankings count alike: none of
 * them is the better signal on every corpus (hotpotqa-100 and the NestJS docs in
 * docs/benchmarks.md). The expansion rephrases the question, so it counts half. The graph
 * strategy is personalized PageRank over entities and passages, whose dense passage prior
 * needs vectors that mean something. `second-hop` is a ranking of its own, interleaved with
 * the first pass; its weight only switches it off at 0. Its query is embedded too: the
 * passage the best one points to may state the next hop in words the names do not match.
 */
export const SEMANTIC_DEFAULTS: RetrievalDefaults = {
  weights: { vector: 1, fulltext: 1, graph: 1, refined: 0.5, 'second-hop': 1, rerank: 1 },
  strategy: 'ppr',
  denseSecondHop: true,
};

/**
 * With lexical vectors (the hash fallback), a vector hit is a weaker full-text hit: full text
 * leads, the graph follows the entities the question names (the weighted walk, which needs no
 * dense prior), vectors add little; the second hop is full text only. Measured on the same two corpora.
 */
export const LEXICAL_DEFAULTS: RetrievalDefaults = {
  weights: { vector: 0.25, fulltext: 1, graph: 0.5, refined: 0.25, 'second-hop': 1, rerank: 1 },
  strategy: 'weighted',
  denseSecondHop: false,
};

export function retrievalDefaults(embedder: Pick<EmbeddingProvider, 'lexical'>): RetrievalDefaults {
  return embedder.lexical ? LEXICAL_DEFAULTS : SEMANTIC_DEFAULTS;
}
