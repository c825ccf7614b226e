import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter, ChunkRecord, TrellisStore } from '@trellis/storage';
import type { GraphRetrieval } from './graph-retriever';

export const RETRIEVAL_MODES = ['vector', 'fulltext', 'graph', 'hybrid'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];
/** `refined` ranks by the query's expansion (vector and full text), in hybrid mode only. */
export type Signal = Exclude<RetrievalMode, 'hybrid'> | 'refined';

export interface SignalScore {
  readonly source: Signal;
  readonly score: number;
  /** 1-based rank within that signal. */
  readonly rank: number;
}

export interface RankedChunk {
  readonly chunk: ChunkRecord;
  readonly score: number;
  readonly signals: SignalScore[];
}

export type HybridWeights = Readonly<Record<Signal, number>>;

export const DEFAULT_HYBRID_WEIGHTS: HybridWeights = { vector: 1, fulltext: 1, graph: 1, refined: 0.5 };
/** Candidates fetched per signal, as a multiple of k, before fusion or cut-off. */
const OVERSAMPLE = 3;
/**
 * How hybrid mode combines signals: `score` sums each signal's min-max normalised score
 * (keeps how much better the best hit is), `rrf` sums 1/(60 + rank) (ignores scores).
 */
export type FusionMethod = 'score' | 'rrf';

/** Reciprocal-rank-fusion constant (Cormack et al.): damps the weight of top ranks. */
const RRF_K = 60;

export interface ChunkQuery {
  readonly scope: KbScope;
  readonly queryVector: Float32Array;
  readonly queryText: string;
  readonly k: number;
  readonly filter?: ChunkFilter;
  /** Needed by graph and hybrid modes. */
  readonly graph?: () => Promise<GraphRetrieval>;
  /** A rephrasing of the query, fused at lower weight in hybrid mode. */
  readonly expansion?: { readonly text: string; readonly vector: Float32Array };
}

/** Ranks chunks by one signal, or by a weighted fusion of all of them (hybrid). */
export class ChunkRetriever {
  constructor(
    private readonly store: TrellisStore,
    private readonly weights: HybridWeights = DEFAULT_HYBRID_WEIGHTS,
    private readonly fusion: FusionMethod = 'score',
  ) {}

  async retrieve(mode: RetrievalMode, query: ChunkQuery): Promise<RankedChunk[]> {
    if (mode !== 'hybrid') return (await this.signal(mode, query, query.k)).slice(0, query.k);
    return this.fuse(query);
  }

  /** Weighted reciprocal-rank fusion of every signal's oversampled ranking. */
  private async fuse(query: ChunkQuery): Promise<RankedChunk[]> {
    const pool = query.k * OVERSAMPLE;
    const lists = await Promise.all((['vector', 'fulltext', 'graph'] as const).map((s) => this.signal(s, query, pool)));
    if (query.expansion) {
      const expanded = { ...query, queryText: query.expansion.text, queryVector: query.expansion.vector };
      for (const source of ['vector', 'fulltext'] as const) {
        const list = await this.signal(source, expanded, pool);
        lists.push(list.map((hit) => ({ ...hit, signals: hit.signals.map((s) => ({ ...s, source: 'refined' as const })) })));
      }
    }
    const fused = new Map<string, { chunk: ChunkRecord; score: number; signals: SignalScore[] }>();
    for (const list of lists) {
      const normalize = this.fusion === 'rrf' ? (s: SignalScore) => 1 / (RRF_K + s.rank) : minMaxNormalizer(list.map((h) => h.score));
      for (const hit of list) {
        const signal = hit.signals[0]!;
        const entry = fused.get(hit.chunk.id) ?? { chunk: hit.chunk, score: 0, signals: [] };
        entry.score += this.weights[signal.source] * normalize(signal);
        entry.signals.push(signal);
        fused.set(hit.chunk.id, entry);
      }
    }
    return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, query.k);
  }

  private async signal(source: Exclude<Signal, 'refined'>, query: ChunkQuery, k: number): Promise<RankedChunk[]> {
    const scored =
      source === 'vector'
        ? await this.store.searchChunksByVector(query.scope, query.queryVector, k, query.filter)
        : source === 'fulltext'
          ? await this.store.searchChunksFullText(query.scope, query.queryText, k, query.filter)
          : await this.viaGraph(query, k);
    return scored.map(({ chunk, score }, i) => ({ chunk, score, signals: [{ source, score, rank: i + 1 }] }));
  }

  /** Chunks that state the selected relationships or mention the selected entities. */
  private async viaGraph(query: ChunkQuery, k: number): Promise<Array<{ chunk: ChunkRecord; score: number }>> {
    if (!query.graph) return [];
    const graph = await query.graph();
    const scores = new Map<string, number>();
    const relationshipChunks = await this.store.chunkIdsForRelationships(query.scope, graph.relationships.map((r) => r.relationship.id));
    for (const { relationship, score } of graph.relationships) {
      for (const chunkId of relationshipChunks.get(relationship.id) ?? []) scores.set(chunkId, (scores.get(chunkId) ?? 0) + score);
    }
    const entityIds = [...graph.entityScores.keys()];
    const entityChunks = await this.store.chunkIdsForEntities(query.scope, entityIds);
    for (const [entityId, chunkIds] of entityChunks) {
      // An entity mentioned everywhere says little about any one chunk.
      const share = (graph.entityScores.get(entityId) ?? 0) / Math.sqrt(chunkIds.length);
      for (const chunkId of chunkIds) scores.set(chunkId, (scores.get(chunkId) ?? 0) + 0.5 * share);
    }
    const ranked = [...scores.entries()].sort((a, b) => b[1] - a[1]);
    const allowed = query.filter?.documentIds?.length ? new Set(query.filter.documentIds) : null;
    const chunks = new Map((await this.store.getChunks(query.scope, ranked.slice(0, k * 4).map(([id]) => id))).map((c) => [c.id, c]));
    const out: Array<{ chunk: ChunkRecord; score: number }> = [];
    for (const [id, score] of ranked) {
      const chunk = chunks.get(id);
      if (!chunk || (allowed && !allowed.has(chunk.documentId))) continue;
      out.push({ chunk, score });
      if (out.length >= k) break;
    }
    return out;
  }
}

/** Maps a signal's scores onto 0..1 (best = 1); all-equal scores all count fully. */
function minMaxNormalizer(scores: readonly number[]): (s: SignalScore) => number {
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  return (s) => (max === min ? 1 : (s.score - min) / (max - min));
}
