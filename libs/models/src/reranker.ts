/** A passage as the reranker sees it. */
export interface RerankCandidate {
  readonly id: string;
  readonly text: string;
}

export interface RerankScore {
  readonly id: string;
  /** Higher is more relevant; only comparable within one call. */
  readonly score: number;
}

/**
 * Re-orders retrieval candidates by relevance to the query, after oversampling. Returns
 * every candidate it scored, best first.
 */
export interface RerankerProvider {
  /** e.g. "local-overlap-v1" or "http:bge-reranker-v2-m3". */
  readonly model: string;
  rerank(query: string, candidates: readonly RerankCandidate[]): Promise<RerankScore[]>;
}

const WORD = /[\p{L}\p{N}]+/gu;
const STOPWORDS = new Set(
  'a an and are as at be by did do does for from had has have he her his how in is it its of on or she that the their they this to was were what when where which who whom whose why with'.split(' '),
);

/**
 * The fallback reranker: no model, no network. Scores a passage by the share of the query's
 * content words it contains, each weighted by its rarity among the candidates (a word every
 * candidate has says nothing), plus a bonus for query word pairs found side by side.
 */
export class LocalOverlapReranker implements RerankerProvider {
  readonly model = 'local-overlap-v1';

  async rerank(query: string, candidates: readonly RerankCandidate[]): Promise<RerankScore[]> {
    const queryWords = contentWords(query);
    if (queryWords.length === 0 || candidates.length === 0) return candidates.map((c) => ({ id: c.id, score: 0 }));
    const docs = candidates.map((c) => {
      const words = contentWords(c.text);
      const pairs = new Set<string>();
      for (let i = 1; i < words.length; i++) pairs.add(`${words[i - 1]} ${words[i]}`);
      return { id: c.id, words: new Set(words), pairs };
    });
    const unique = [...new Set(queryWords)];
    const idf = new Map(unique.map((w) => [w, Math.log(1 + candidates.length / (1 + docs.filter((d) => d.words.has(w)).length))]));
    const total = unique.reduce((sum, w) => sum + idf.get(w)!, 0) || 1;
    const queryPairs: string[] = [];
    for (let i = 1; i < queryWords.length; i++) queryPairs.push(`${queryWords[i - 1]} ${queryWords[i]}`);
    return docs
      .map((d) => {
        const overlap = unique.reduce((sum, w) => sum + (d.words.has(w) ? idf.get(w)! : 0), 0) / total;
        const adjacency = queryPairs.length === 0 ? 0 : queryPairs.filter((p) => d.pairs.has(p)).length / queryPairs.length;
        return { id: d.id, score: overlap + 0.25 * adjacency };
      })
      .sort((a, b) => b.score - a.score);
  }
}

function contentWords(text: string): string[] {
  return (text.toLowerCase().match(WORD) ?? []).filter((w) => !STOPWORDS.has(w));
}
