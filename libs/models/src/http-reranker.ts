import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { RerankCandidate, RerankerProvider, RerankScore } from './reranker';

export interface HttpRerankerSettings {
  /** Base URL; `/rerank` is appended (e.g. `https://api.cohere.com/v2`, `http://tei:8080`). */
  readonly baseUrl: string;
  readonly model: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
}

interface RerankResult {
  index: number;
  relevance_score?: number;
  score?: number;
}

/**
 * A `/rerank` endpoint: `{model, query, documents, top_n}` in, `{results: [{index,
 * relevance_score}]}` out, as served by Cohere, Jina and vLLM; a bare array of `{index,
 * score}` (Hugging Face TEI) is accepted too.
 */
export class HttpReranker implements RerankerProvider {
  readonly model: string;

  constructor(
    private readonly settings: HttpRerankerSettings,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {
    this.model = `http:${settings.model}`;
  }

  async rerank(query: string, candidates: readonly RerankCandidate[]): Promise<RerankScore[]> {
    if (candidates.length === 0) return [];
    const url = `${this.settings.baseUrl.replace(/\/+$/, '')}/rerank`;
    let response: Response;
    try {
      response = await this.fetchImpl(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(this.settings.apiKey ? { authorization: `Bearer ${this.settings.apiKey}` } : {}) },
        body: JSON.stringify({ model: this.settings.model, query, documents: candidates.map((c) => c.text), texts: candidates.map((c) => c.text), top_n: candidates.length }),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (error) {
      throw new TrellisError(ErrorCode.Unavailable, `reranker at ${url} did not answer: ${(error as Error).message}`);
    }
    if (!response.ok) throw new TrellisError(ErrorCode.Unavailable, `reranker at ${url} answered HTTP ${response.status}`);
    const body = (await response.json()) as { results?: RerankResult[] } | RerankResult[];
    const results = Array.isArray(body) ? body : body.results;
    if (!Array.isArray(results)) throw new TrellisError(ErrorCode.Unavailable, `reranker at ${url} answered without results`);
    const scored: RerankScore[] = [];
    for (const r of results) {
      const candidate = candidates[r.index];
      const score = r.relevance_score ?? r.score;
      if (candidate && typeof score === 'number') scored.push({ id: candidate.id, score });
    }
    return scored.sort((a, b) => b.score - a.score);
  }
}
