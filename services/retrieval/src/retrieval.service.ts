import { DEFAULT_HISTORY_LIMITS, TrellisError, toEntityMessage, toRelationshipMessage, validateChatHistory, validateIdList } from '@trellis/contracts';
import type { KbScope, TenantScope, v1 } from '@trellis/contracts';
import { refineQuestionWithEntities, vectorsCompatible } from '@trellis/models';
import type { ChatModel, EmbeddingProvider, RerankerProvider } from '@trellis/models';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { KnowledgeBaseRecord, TrellisRepositories } from '@trellis/storage';
import { CANDIDATE_POOL, ChunkRetriever, RETRIEVAL_MODES, fuseRankings } from './chunk-retriever';
import type { RankedChunk, RetrievalMode } from './chunk-retriever';
import { GRAPH_STRATEGIES, GraphRetriever, renderGraph } from './graph-retriever';
import type { GraphRetrieval, GraphStrategy } from './graph-retriever';
import { QuestionDecomposer } from './question-decomposer';
import { ModelQuestionRefiner } from './question-refiner';
import { GlobalRetriever } from './global-retriever';
import { routeQuestion } from './question-router';
import { sharedVectorSearch } from './shared-vector-search';
import { retrievalDefaults } from './retrieval-defaults';
import type { RetrievalDefaults } from './retrieval-defaults';

export interface RetrievalServiceOptions {
  /** Re-orders oversampled chunk candidates; none by default (see docs/benchmarks.md). */
  readonly reranker?: RerankerProvider;
  /** Enables `decompose` on RetrieveChunks and the "model" refinement of Retrieve. */
  readonly llm?: ChatModel | null;
}

export const MAX_QUERY_CHARS = 8000;
export const MAX_TOP_K = 1000;
export const MAX_KNOWLEDGE_BASES = 10;
const DEFAULT_TOP_K = 5;
const DEFAULT_DEPTH = 2;
/**
 * Hops of the graph walk behind the graph signal of RetrieveChunks: on hotpotqa-100 a second
 * hop found no further gold passage for either strategy and cost a third of the latency.
 */
const CHUNK_GRAPH_DEPTH = 1;
const MAX_DEPTH = 4;
const DEFAULT_MAX_RELATIONSHIPS = 20;
const MAX_FILTER_CHARS = 2048;
const REFINEMENTS = ['entities', 'model'] as const;
type Refinement = (typeof REFINEMENTS)[number];
const SCOPES = ['local', 'global', 'auto'] as const;
type Scope = (typeof SCOPES)[number];
const MAX_HISTORY_MESSAGES = 20;
const MAX_HISTORY_MESSAGE_CHARS = 32_000;
const MAX_REFINEMENT_PROMPT_CHARS = 8000;
const MAX_METADATA_FILTERS = 64;

/**
 * The retrieval API: validates a request, embeds the question once, and runs chunk, graph
 * or combined retrieval. Responses use the gRPC contract's shapes.
 */
export class RetrievalService {
  private readonly graphs: GraphRetriever;
  private readonly reranker: RerankerProvider | undefined;
  private readonly decomposer: QuestionDecomposer | null;
  private readonly refiner: ModelQuestionRefiner | null;
  private readonly defaults: RetrievalDefaults;
  private readonly global: GlobalRetriever;

  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'chunks' | 'graphReads' | 'communities'>,
    private readonly embedder: EmbeddingProvider,
    options: RetrievalServiceOptions = {},
  ) {
    this.graphs = new GraphRetriever(repos.graphReads, repos.chunks);
    this.defaults = retrievalDefaults(embedder);
    this.reranker = options.reranker;
    this.decomposer = options.llm ? new QuestionDecomposer(options.llm) : null;
    this.refiner = options.llm ? new ModelQuestionRefiner(options.llm) : null;
    this.global = new GlobalRetriever(repos);
  }

  async retrieveChunks(tenant: TenantScope, request: v1.RetrieveChunksRequest): Promise<v1.RetrieveChunksResponse> {
    const query = validateQuery(request.query);
    const mode = validateMode(request.mode);
    const k = validateTopK(request.topK);
    const strategy = validateStrategy(request.strategy, this.defaults.strategy);
    const filter = validateFilter(request.filter);
    const expansion = request.expansion.trim();
    if (expansion.length > MAX_QUERY_CHARS) throw TrellisError.invalid(`expansion is longer than ${MAX_QUERY_CHARS} characters`);
    const requestedDocuments = validateIdList(request.documentIds, 'document_ids');
    const names = [...new Set([request.knowledgeBase, ...request.additionalKnowledgeBases])];
    if (names.length > MAX_KNOWLEDGE_BASES || request.additionalKnowledgeBases.length > MAX_KNOWLEDGE_BASES) throw TrellisError.invalid(`at most ${MAX_KNOWLEDGE_BASES} knowledge bases per request (knowledge_base and additional_knowledge_bases)`);
    const kbs = [...new Map((await Promise.all(names.map((name) => requireKnowledgeBase(this.repos.knowledgeBases, tenant, name)))).map((kb) => [kb.id, kb])).values()];
    const scopes = kbs.map(kbScope);
    const subQuestions = request.decompose && this.decomposer ? await this.decomposer.decompose(query) : [];
    const questions = [query, ...subQuestions];
    const vectors = await this.embedder.embed(expansion === '' ? questions : [...questions, expansion]);
    const expansionVector = expansion === '' ? undefined : vectors[questions.length];
    // Rankings fused across sub-questions are as deep as hybrid's own, so the first results
    // do not change with the number asked for.
    const depth = questions.length > 1 ? Math.max(k, CANDIDATE_POOL) : k;
    const rankedPerKb = await Promise.all(
      scopes.map(async (scope, kbIndex) => {
        const documentIds = await this.allowedDocuments(scope, requestedDocuments, filter);
        if (documentIds?.length === 0) return [];
        const usable = this.vectorsUsable(kbs[kbIndex]!);
        const kbMode = usable ? mode : withoutVectors(mode);
        const embed = usable ? this.hopEmbedder() : undefined;
        const rankings = await Promise.all(
          questions.map((question, i) => {
            const { chunks, graphs } = this.forQuestion();
            return chunks.retrieve(kbMode, {
              scope,
              queryVector: vectors[i]!,
              queryText: question,
              k: depth,
              filter: { documentIds: documentIds ?? [] },
              graph: lazy(() =>
                graphs.retrieve(scope, vectors[i]!, question, { depth: CHUNK_GRAPH_DEPTH, maxRelationships: DEFAULT_MAX_RELATIONSHIPS, strategy, filter: { documentIds: documentIds ?? [] }, passagesOnly: true }),
              ),
              // The expansion rephrases the whole question, not a part of it.
              expansion: i === 0 && expansionVector ? { text: expansion, vector: expansionVector } : undefined,
              embed,
            });
          }),
        );
        return rankings.length === 1 ? rankings[0]! : fuseRankings(rankings, k);
      }),
    );
    if (scopes.length === 1) return { chunks: await this.toHits(scopes[0]!, rankedPerKb[0]!) };
    // Scores of different knowledge bases are not comparable; ranks are. Identical text found
    // in several knowledge bases is returned once, from where it ranked best.
    const scopeOf = new Map(rankedPerKb.flatMap((ranked, i) => ranked.map((r) => [r.chunk.id, scopes[i]!] as const)));
    const seen = new Set<string>();
    const fused = fuseRankings(rankedPerKb, k * scopes.length).filter((r) => !seen.has(r.chunk.contentHash) && Boolean(seen.add(r.chunk.contentHash))).slice(0, k);
    // One document lookup per knowledge base, then back into fused order.
    const hits = new Map<string, v1.ChunkHit>();
    await Promise.all(
      scopes.map(async (scope) => {
        for (const hit of await this.toHits(scope, fused.filter((r) => scopeOf.get(r.chunk.id) === scope))) hits.set(hit.chunkId, hit);
      }),
    );
    return { chunks: fused.map((r) => hits.get(r.chunk.id)!) };
  }

  async retrieveGraph(tenant: TenantScope, request: v1.RetrieveGraphRequest): Promise<v1.GraphContext> {
    const query = validateQuery(request.query);
    const strategy = validateStrategy(request.strategy, this.defaults.strategy);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, request.knowledgeBase);
    const scope = kbScope(kb);
    const vector = await this.questionVector(kb, query);
    const graph = await this.graphs.retrieve(scope, vector, query, { ...graphOptions(request.depth, request.maxRelationships), strategy });
    return this.toGraphContext(scope, graph);
  }

  /**
   * Graph first; the question is then refined with the graph (the names of the entities it
   * found most relevant, or a language model's rewrite from the graph and the conversation),
   * and chunks are retrieved for the question and, at lower weight, for the refined question.
   * The knowledge base is looked up once, the question embedded once and the graph walked
   * once: its result is the context returned, the input of the refinement and the graph
   * signal of chunk retrieval. A chat turn is this one call.
   *
   * Scope "global" ranks community reports instead (their key facts' chunks are the chunks
   * returned); "auto" routes by routeQuestion. "local", the default, is the path above.
   */
  async retrieve(tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse> {
    const scope = validateScope(request.scope);
    if (scope === 'local') return this.retrieveLocal(tenant, request);
    const query = validateQuery(request.query);
    const k = validateTopK(request.topK);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, request.knowledgeBase);
    const kbRows = kbScope(kb);
    const decision = scope === 'global' ? { route: 'global' as const, reason: 'global scope requested' } : routeQuestion(query, await this.global.communityCount(kbRows));
    if (decision.route === 'local') return { ...(await this.retrieveLocal(tenant, request)), route: 'local', routeReason: decision.reason };
    const found = await this.global.retrieve(kbRows, await this.questionVector(kb, query), k);
    const scoreOf = new Map<string, number>();
    for (const c of found.communities) for (const f of c.keyFacts) for (const id of f.chunkIds) if (!scoreOf.has(id)) scoreOf.set(id, c.score);
    const chunks = await this.repos.chunks.getChunks(kbRows, found.chunkIds);
    const ranked = chunks.map((chunk) => ({ chunk, score: scoreOf.get(chunk.id) ?? 0, signals: [] }));
    return { graph: undefined, chunks: await this.toHits(kbRows, ranked), refinedQuery: query, knowledgeBaseId: kb.id, route: 'global', routeReason: decision.reason, communities: found.communities };
  }

  private async retrieveLocal(tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse> {
    const query = validateQuery(request.query);
    const mode = validateMode(request.mode);
    const k = validateTopK(request.topK);
    const strategy = validateStrategy(request.strategy, this.defaults.strategy);
    const refinement = validateRefinement(request.refinement);
    const history = validateHistory(request.history);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, request.knowledgeBase);
    const scope = kbScope(kb);
    const vector = await this.questionVector(kb, query);
    const { chunks, graphs } = this.forQuestion();
    const graph = await graphs.retrieve(scope, vector, query, { ...graphOptions(request.depth, 0), strategy });
    const refinedQuery =
      refinement === 'model' && this.refiner
        ? await this.refiner.refine(query, history, renderGraph(graph.entities, graph.relationships), validatePrompt(request.refinementPrompt))
        : refineQuestionWithEntities(query, graph.entities.map((e) => e.name));
    const [refinedVector] = refinedQuery === query ? [undefined] : await this.embedder.embed([refinedQuery]);
    const ranked = await chunks.retrieve(this.vectorsUsable(kb) ? mode : withoutVectors(mode), {
      scope,
      queryVector: vector,
      queryText: query,
      k,
      graph: async () => graph,
      expansion: refinedVector ? { text: refinedQuery, vector: refinedVector } : undefined,
      rerank: request.rerank !== false,
      embed: this.vectorsUsable(kb) ? this.hopEmbedder() : undefined,
    });
    return { graph: await this.toGraphContext(scope, graph), chunks: await this.toHits(scope, ranked), refinedQuery, knowledgeBaseId: kb.id, route: '', routeReason: '', communities: [] };
  }

  /** Chunk and graph retrieval for one question, which share its vector searches (sharedVectorSearch). */
  private forQuestion(): { chunks: ChunkRetriever; graphs: GraphRetriever } {
    const chunks = sharedVectorSearch(this.repos.chunks);
    return {
      chunks: new ChunkRetriever({ chunks, graphReads: this.repos.graphReads, documents: this.repos.documents }, this.defaults.weights, 'max', this.reranker),
      graphs: new GraphRetriever(this.repos.graphReads, chunks),
    };
  }

  /** How hybrid's second hop embeds its query; undefined where the defaults keep it to full text. */
  private hopEmbedder(): ((text: string) => Promise<Float32Array>) | undefined {
    if (!this.defaults.denseSecondHop) return undefined;
    return async (text) => (await this.embedder.embed([text]))[0]!;
  }

  /** False for a knowledge base whose vectors another embedding model made (until it is re-indexed). */
  private vectorsUsable(kb: KnowledgeBaseRecord): boolean {
    return vectorsCompatible(kb, this.embedder);
  }

  /** The question's embedding; zeros where the stored vectors are of another model, so they rank nothing. */
  private async questionVector(kb: KnowledgeBaseRecord, query: string): Promise<Float32Array> {
    if (!this.vectorsUsable(kb)) return new Float32Array(this.embedder.dimensions);
    const [vector] = await this.embedder.embed([query]);
    return vector!;
  }

  /**
   * The documents a request may retrieve from: its document ids, narrowed by the filter's
   * source-URI prefix and metadata. `null` means every document.
   */
  private async allowedDocuments(scope: KbScope, ids: readonly string[], { prefix, metadata }: DocumentFilter): Promise<string[] | null> {
    if (prefix === '' && metadata.length === 0) return ids.length > 0 ? [...ids] : null;
    const requested = ids.length > 0 ? new Set(ids) : null;
    return (await this.repos.documents.listDocuments(scope))
      .filter((d) => (!requested || requested.has(d.id)) && d.sourceUri.startsWith(prefix) && metadata.every(([key, value]) => d.metadata[key] === value))
      .map((d) => d.id);
  }

  private async toHits(scope: KbScope, ranked: RankedChunk[]): Promise<v1.ChunkHit[]> {
    const documentIds = [...new Set(ranked.map((r) => r.chunk.documentId))];
    const documents = new Map((await Promise.all(documentIds.map((id) => this.repos.documents.getDocument(scope, id)))).flatMap((d) => (d ? [[d.id, d] as const] : [])));
    return ranked.map((r) => {
      const document = documents.get(r.chunk.documentId);
      return {
        chunkId: r.chunk.id,
        documentId: r.chunk.documentId,
        sourceUri: document?.sourceUri ?? '',
        ordinal: r.chunk.ordinal,
        text: r.chunk.text,
        score: r.score,
        signals: r.signals.map((s) => ({ source: s.source, score: s.score, rank: s.rank })),
        documentMetadata: document?.metadata ?? {},
        knowledgeBaseId: scope.kbId,
      };
    });
  }

  private async toGraphContext(scope: KbScope, graph: GraphRetrieval): Promise<v1.GraphContext> {
    const chunkIds = await this.repos.graphReads.chunkIdsForRelationships(scope, graph.relationships.map((r) => r.relationship.id));
    return {
      entities: graph.entities.map(toEntityMessage),
      relationships: graph.relationships.map((r) => ({
        relationship: toRelationshipMessage(r.relationship, chunkIds.get(r.relationship.id) ?? []),
        score: r.score,
        hop: r.hop,
      })),
      rendered: renderGraph(graph.entities, graph.relationships),
    };
  }
}

function validateQuery(query: string): string {
  const trimmed = query.trim();
  if (trimmed === '') throw TrellisError.invalid('query is empty');
  if (trimmed.length > MAX_QUERY_CHARS) throw TrellisError.invalid(`query is longer than ${MAX_QUERY_CHARS} characters`);
  return trimmed;
}

function validateMode(mode: string): RetrievalMode {
  if (mode === '') return 'hybrid';
  if (!(RETRIEVAL_MODES as readonly string[]).includes(mode)) {
    throw TrellisError.invalid(`unknown mode "${mode}": use one of ${RETRIEVAL_MODES.join(', ')}`);
  }
  return mode as RetrievalMode;
}

function validateStrategy(strategy: string | undefined, fallback: GraphStrategy): GraphStrategy {
  if (!strategy) return fallback;
  if (!(GRAPH_STRATEGIES as readonly string[]).includes(strategy)) {
    throw TrellisError.invalid(`unknown graph strategy "${strategy}": use one of ${GRAPH_STRATEGIES.join(', ')}`);
  }
  return strategy as GraphStrategy;
}

function validateRefinement(refinement: string | undefined): Refinement {
  if (!refinement) return 'entities';
  if (!(REFINEMENTS as readonly string[]).includes(refinement)) throw TrellisError.invalid(`unknown refinement "${refinement}": use one of ${REFINEMENTS.join(', ')}`);
  return refinement as Refinement;
}

/** The refinement's own instructions, or undefined for the built-in ones. */
function validatePrompt(prompt: string | undefined): string | undefined {
  if (!prompt) return undefined;
  if (prompt.length > MAX_REFINEMENT_PROMPT_CHARS) throw TrellisError.invalid(`refinement_prompt is longer than ${MAX_REFINEMENT_PROMPT_CHARS} characters`);
  return prompt;
}

function validateScope(scope: string | undefined): Scope {
  if (!scope) return 'local';
  if (!(SCOPES as readonly string[]).includes(scope)) throw TrellisError.invalid(`unknown scope "${scope}": use one of ${SCOPES.join(', ')}`);
  return scope as Scope;
}

function validateHistory(history: readonly v1.ChatMessage[]): readonly v1.ChatMessage[] {
  return validateChatHistory(history, { ...DEFAULT_HISTORY_LIMITS, maxMessages: MAX_HISTORY_MESSAGES, maxMessageChars: MAX_HISTORY_MESSAGE_CHARS });
}

/** A request's document filter: a source-URI prefix and metadata entries that must all match. */
interface DocumentFilter {
  prefix: string;
  metadata: Array<[string, string]>;
}

function validateFilter(filter: v1.DocumentFilter | undefined): DocumentFilter {
  const prefix = filter?.sourceUriPrefix ?? '';
  const metadata = Object.entries(filter?.metadata ?? {});
  if (prefix.length > MAX_FILTER_CHARS) throw TrellisError.invalid(`filter.source_uri_prefix is longer than ${MAX_FILTER_CHARS} characters`);
  if (metadata.length > MAX_METADATA_FILTERS) throw TrellisError.invalid(`filter.metadata has more than ${MAX_METADATA_FILTERS} entries`);
  if (metadata.some(([key]) => key.trim() === '')) throw TrellisError.invalid('filter.metadata keys must not be empty');
  return { prefix, metadata };
}

function validateTopK(topK: number): number {
  if (topK === 0) return DEFAULT_TOP_K;
  if (!Number.isInteger(topK) || topK < 1 || topK > MAX_TOP_K) throw TrellisError.invalid(`top_k must be between 1 and ${MAX_TOP_K}`);
  return topK;
}

function graphOptions(depth: number, maxRelationships: number): { depth: number; maxRelationships: number } {
  if (depth > MAX_DEPTH) throw TrellisError.invalid(`depth must be at most ${MAX_DEPTH}`);
  if (maxRelationships > MAX_TOP_K) throw TrellisError.invalid(`max_relationships must be at most ${MAX_TOP_K}`);
  return { depth: depth || DEFAULT_DEPTH, maxRelationships: maxRelationships || DEFAULT_MAX_RELATIONSHIPS };
}

function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= make());
}

/** The mode that answers without vector search: full text for `vector` and `hybrid`. */
function withoutVectors(mode: RetrievalMode): RetrievalMode {
  return mode === 'graph' || mode === 'fulltext' ? mode : 'fulltext';
}
