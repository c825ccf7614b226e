import { titleKey } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { RerankerProvider } from '@trellis/models';
import type { ChunkFilter, ChunkRecord, ChunkRepository, DocumentRepository, GraphReadRepository } from '@trellis/storage';
import type { GraphRetrieval } from './graph-retriever';
import { chunksByEntityShares } from './entity-shares';
import { SEMANTIC_DEFAULTS } from './retrieval-defaults';
import { questionNames, secondHopNames } from './second-hop';

export const RETRIEVAL_MODES = ['vector', 'fulltext', 'graph', 'hybrid'] as const;
export type RetrievalMode = (typeof RETRIEVAL_MODES)[number];
/**
 * `refined` ranks by the query's expansion (vector and full text), `second-hop` by full text
 * (and vector, when the query can be embedded) over the query plus the names the best
 * first-pass passage mentions; hybrid mode only.
 */
export type Signal = Exclude<RetrievalMode, 'hybrid'> | 'refined' | 'second-hop' | 'rerank';

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

/**
 * Candidates each signal contributes to fusion and to reranking, whatever k is (more only when
 * k asks for more): with lists sized from k, the first results would change with the number
 * of results asked for.
 */
export const CANDIDATE_POOL = 30;
/** Names taken from the best first-pass passage into the second-hop query. */
const SECOND_HOP_NAMES = 12;
/**
 * How hybrid mode combines signals: `max` sums each signal's score divided by its best (keeps
 * how far below the best a hit is), `score` sums min-max normalised scores (the worst
 * candidate counts 0), `rrf` sums 1/(60 + rank) (ignores scores).
 */
export type FusionMethod = 'max' | 'score' | 'rrf';

/** Reciprocal-rank-fusion constant (Cormack et al.): damps the weight of top ranks. */
export const RRF_K = 60;

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
  /** False skips the reranker for this query. */
  readonly rerank?: boolean;
  /**
   * Embeds the second hop's query, for its dense half (hybrid mode). Without it the second
   * hop is full text only, as it must be where vectors carry no meaning (hash embeddings).
   */
  readonly embed?: (text: string) => Promise<Float32Array>;
}

/** What ranking reads: chunk search, and the chunks that mention the graph's entities. */
export interface ChunkRetrieverReads {
  readonly chunks: Pick<ChunkRepository, 'getChunks' | 'searchChunksByVector' | 'searchChunksFullText'>;
  readonly graphReads: Pick<GraphReadRepository, 'chunkIdsForEntities' | 'entityIdsForChunks'>;
  /** Document titles, for the second hop's title ranking; without it that ranking is left out. */
  readonly documents?: Pick<DocumentRepository, 'documentTitles'>;
}

/** Ranks chunks by one signal, or by a weighted fusion of all of them (hybrid). */
export class ChunkRetriever {
  constructor(
    private readonly repos: ChunkRetrieverReads,
    private readonly weights: HybridWeights = SEMANTIC_DEFAULTS.weights,
    private readonly fusion: FusionMethod = 'max',
    /** When set, re-orders an oversampled candidate list before the cut to k. */
    private readonly reranker?: RerankerProvider,
  ) {}

  async retrieve(mode: RetrievalMode, query: ChunkQuery): Promise<RankedChunk[]> {
    if (!this.reranker || query.rerank === false) return this.rank(mode, query);
    const candidates = await this.rank(mode, { ...query, k: Math.max(query.k, CANDIDATE_POOL) });
    const scores = await this.reranker.rerank(query.queryText, candidates.map((c) => ({ id: c.chunk.id, text: c.chunk.text })));
    const byId = new Map(candidates.map((c) => [c.chunk.id, c]));
    return scores.slice(0, query.k).flatMap(({ id, score }, i) => {
      const hit = byId.get(id);
      return hit ? [{ chunk: hit.chunk, score, signals: [...hit.signals, { source: 'rerank' as const, score, rank: i + 1 }] }] : [];
    });
  }

  private async rank(mode: RetrievalMode, query: ChunkQuery): Promise<RankedChunk[]> {
    if (mode !== 'hybrid') return (await this.signal(mode, query, query.k)).slice(0, query.k);
    return this.fuse(query);
  }

  /**
   * Two rankings, merged turn by turn. The first fuses vector, full-text and graph rankings
   * (and the expansion's, as `refined`) of the question. Its best passage then leads the
   * second hop: the question plus the names that passage mentions, searched again. For
   * a multi-hop question that passage is usually the first hop and its names lead to the
   * second; for a simple question the second hop mostly finds the first pass's passages
   * again. The two rankings answer different questions (what the question asks about; what
   * its best passage points to), so neither decides the order alone: the result takes the
   * best passage of each not yet taken in turn, first pass first. A strong first-pass hit
   * keeps its place among the first ranks whatever the second hop finds, and the second hop's
   * find reaches them too. Every ranking is CANDIDATE_POOL deep whatever k is.
   */
  private async fuse(query: ChunkQuery): Promise<RankedChunk[]> {
    const pool = Math.max(query.k, CANDIDATE_POOL);
    const lists = await Promise.all((['vector', 'fulltext', 'graph'] as const).map((s) => this.signal(s, query, pool)));
    if (query.expansion) {
      const expanded = { ...query, queryText: query.expansion.text, queryVector: query.expansion.vector };
      for (const source of ['vector', 'fulltext'] as const) lists.push(relabel(await this.signal(source, expanded, pool), 'refined'));
    }
    const first = this.combine(lists);
    const names = first[0] ? secondHopNames(first[0].chunk.text, query.queryText, SECOND_HOP_NAMES) : [];
    if (names.length === 0 || this.weights['second-hop'] <= 0) return first.slice(0, query.k);
    const hop = await this.secondHop({ ...query, queryText: `${query.queryText} ${names.join(' ')}` }, names, pool);
    // A question naming two or more things ("which of A and B") wants each before what one points to.
    const asked = questionNames(query.queryText);
    return interleave(first, hop, query.k, asked.length >= 2 ? asked : []);
  }

  /**
   * The second hop's ranking: the rewritten query (question + names of the best first-pass
   * passage) searched by full text and, when the query can be embedded, by vector too, and
   * the candidates of both whose document is titled by one of the names, fused by reciprocal
   * rank. Full text finds the names as written; the dense half finds a passage that states
   * the next hop in other words (the paraphrase-proof next hop); the title ranking
   * prefers the page *about* a name over the pages that merely mention it. Ranks, not
   * scores, because a long keyword query's scores and cosine similarities have no common
   * scale, and neither half is the better one on every corpus.
   */
  private async secondHop(hopQuery: ChunkQuery, names: readonly string[], pool: number): Promise<RankedChunk[]> {
    const embed = hopQuery.embed;
    const [sparse, dense] = await Promise.all([
      this.signal('fulltext', hopQuery, pool),
      embed ? embed(hopQuery.queryText).then((queryVector) => this.signal('vector', { ...hopQuery, queryVector }, pool)) : Promise.resolve([]),
    ]);
    const searched = dense.length === 0 ? [sparse] : [sparse, dense];
    const titled = await this.titledByNames(hopQuery.scope, fuseRankings(searched, sparse.length + dense.length), names);
    const rankings = titled.length === 0 ? searched : [...searched, titled];
    if (rankings.length === 1) return relabel(sparse, 'second-hop');
    return fuseRankings(rankings, sparse.length + dense.length).map((hit, i) => ({ chunk: hit.chunk, score: hit.score, signals: [{ source: 'second-hop' as const, score: hit.score, rank: i + 1 }] }));
  }

  /** The candidates, in their order, whose document's title names one of `names` by titleKey (one batch read of titles). */
  private async titledByNames(scope: KbScope, candidates: readonly RankedChunk[], names: readonly string[]): Promise<RankedChunk[]> {
    if (!this.repos.documents || candidates.length === 0) return [];
    const wanted = new Set(names.map(titleKey).filter((key) => key !== ''));
    const titles = await this.repos.documents.documentTitles(scope, candidates.map((c) => c.chunk.documentId));
    return candidates.filter((c) => wanted.has(titleKey(titles.get(c.chunk.documentId) ?? '')));
  }

  /** Weighted fusion of rankings, each normalised by the fusion method. */
  private combine(lists: ReadonlyArray<readonly RankedChunk[]>): RankedChunk[] {
    const fused = new Map<string, { chunk: ChunkRecord; score: number; signals: SignalScore[] }>();
    for (const list of lists) {
      const normalize = normalizer(this.fusion, list.map((h) => h.score));
      for (const hit of list) {
        const signal = hit.signals[0]!;
        const entry = fused.get(hit.chunk.id) ?? { chunk: hit.chunk, score: 0, signals: [] };
        entry.score += this.weights[signal.source] * normalize(signal);
        entry.signals.push(signal);
        fused.set(hit.chunk.id, entry);
      }
    }
    return [...fused.values()].sort((a, b) => b.score - a.score);
  }

  private async signal(source: Exclude<RetrievalMode, 'hybrid'>, query: ChunkQuery, k: number): Promise<RankedChunk[]> {
    const scored =
      source === 'vector'
        ? await this.repos.chunks.searchChunksByVector(query.scope, query.queryVector, k, query.filter)
        : source === 'fulltext'
          ? await this.repos.chunks.searchChunksFullText(query.scope, query.queryText, k, query.filter)
          : await this.viaGraph(query, k);
    return scored.map(({ chunk, score }, i) => ({ chunk, score, signals: [{ source, score, rank: i + 1 }] }));
  }

  /**
   * Chunks that mention the entities the graph selected (those the question names and the
   * ends of the walked relationships), each entity's relevance shared among the chunks that
   * mention it: an entity mentioned everywhere says little about any one chunk. (Adding the
   * chunks that state the walked relationships measured no better; see docs/benchmarks.md.)
   */
  private async viaGraph(query: ChunkQuery, k: number): Promise<Array<{ chunk: ChunkRecord; score: number }>> {
    if (!query.graph) return [];
    const graph = await query.graph();
    if (graph.passageScores) return this.passagesInOrder(query, [...graph.passageScores], k);
    const mentionCounts = new Map(graph.entities.map((e) => [e.id, e.mentionCount]));
    // passagesInOrder looks at the first k * 4 only.
    return this.passagesInOrder(query, await chunksByEntityShares(this.repos.graphReads, query.scope, graph.entityScores, mentionCounts, k * 4), k);
  }

  /**
   * The first k of these (chunk id, score) pairs, best first, that the query's filter allows,
   * among the first k * 4. Without a filter only as many rows are read as are still wanted (all
   * but a chunk removed meanwhile exist): the first k, not the k * 4 a filter may need.
   */
  private async passagesInOrder(query: ChunkQuery, ranked: ReadonlyArray<readonly [string, number]>, k: number): Promise<Array<{ chunk: ChunkRecord; score: number }>> {
    const allowed = query.filter?.documentIds?.length ? new Set(query.filter.documentIds) : null;
    const limit = Math.min(ranked.length, k * 4);
    const out: Array<{ chunk: ChunkRecord; score: number }> = [];
    for (let from = 0; from < limit && out.length < k; ) {
      const to = allowed ? limit : Math.min(limit, from + k - out.length);
      const window = ranked.slice(from, to);
      const chunks = new Map((await this.repos.chunks.getChunks(query.scope, window.map(([id]) => id))).map((c) => [c.id, c]));
      for (const [id, score] of window) {
        const chunk = chunks.get(id);
        if (!chunk || (allowed && !allowed.has(chunk.documentId))) continue;
        out.push({ chunk, score });
        if (out.length >= k) break;
      }
      from = to;
    }
    return out;
  }
}

/** Maps a signal's scores onto 0..1 (best = 1) by the fusion method; all-equal scores all count fully. */
function normalizer(method: FusionMethod, scores: readonly number[]): (s: SignalScore) => number {
  const max = Math.max(...scores);
  const min = Math.min(...scores);
  switch (method) {
    case 'rrf':
      return (s) => 1 / (RRF_K + s.rank);
    case 'max':
      return (s) => (max <= 0 ? (max === min ? 1 : (s.score - min) / (max - min)) : Math.max(0, s.score) / max);
    case 'score':
      return (s) => (max === min ? 1 : (s.score - min) / (max - min));
    default: {
      const unknown: never = method;
      throw new Error(`unknown fusion method ${String(unknown)}`);
    }
  }
}

/**
 * The first k distinct passages of two rankings taken in turn (the next not yet taken from
 * each, `first` first), scored by their reciprocal rank in the merged order. A passage both
 * rankings hold keeps the signals of both.
 *
 * The second ranking's turn goes to the first instead when one of `askedNames` is in no
 * passage taken yet, the first ranking's next passage has it and the second's does not.
 */
function interleave(first: readonly RankedChunk[], second: readonly RankedChunk[], k: number, askedNames: readonly string[] = []): RankedChunk[] {
  const firstById = new Map(first.map((hit) => [hit.chunk.id, hit]));
  const taken = new Map<string, RankedChunk>();
  let uncovered = askedNames;
  const next = [0, 0];
  const lists = [first, second] as const;
  const peek = (turn: 0 | 1) => {
    const list = lists[turn];
    while (next[turn]! < list.length && taken.has(list[next[turn]!]!.chunk.id)) next[turn]!++;
    return list[next[turn]!];
  };
  const coversAsked = (hit: RankedChunk | undefined) => hit !== undefined && uncovered.some((name) => hit.chunk.text.includes(name));
  while (taken.size < k && (next[0]! < first.length || next[1]! < second.length)) {
    for (const scheduled of [0, 1] as const) {
      const turn = scheduled === 1 && coversAsked(peek(0)) && !coversAsked(peek(1)) ? 0 : scheduled;
      const hit = peek(turn);
      if (!hit || taken.size >= k) continue;
      next[turn]!++;
      const before = turn === 1 ? firstById.get(hit.chunk.id) : undefined;
      // Scores of the two rankings are not comparable: the merged order's is its reciprocal rank.
      taken.set(hit.chunk.id, { chunk: hit.chunk, score: 1 / (taken.size + 1), signals: [...(before?.signals ?? []), ...hit.signals] });
      uncovered = uncovered.filter((name) => !hit.chunk.text.includes(name));
    }
  }
  return [...taken.values()];
}

/**
 * Reciprocal-rank fusion of rankings (of a question and its sub-questions, of several
 * knowledge bases, of the second hop's two searches), deduplicated by chunk: scores of
 * different queries are not comparable, ranks are.
 */
export function fuseRankings(rankings: ReadonlyArray<readonly RankedChunk[]>, k: number): RankedChunk[] {
  const fused = new Map<string, RankedChunk & { score: number }>();
  for (const ranking of rankings) {
    ranking.forEach((hit, i) => {
      const entry = fused.get(hit.chunk.id);
      const score = 1 / (RRF_K + i + 1);
      if (entry) fused.set(hit.chunk.id, { ...entry, score: entry.score + score, signals: [...entry.signals, ...hit.signals] });
      else fused.set(hit.chunk.id, { chunk: hit.chunk, score, signals: [...hit.signals] });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, k);
}

function relabel(list: readonly RankedChunk[], source: Signal): RankedChunk[] {
  return list.map((hit) => ({ ...hit, signals: hit.signals.map((s) => ({ ...s, source })) }));
}
