import { TrellisError } from '@trellis/contracts';
import type { KbScope, TenantScope, v1 } from '@trellis/contracts';
import { refineQuestionWithEntities } from '@trellis/models';
import type { EmbeddingProvider } from '@trellis/models';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { EntityRecord, RelationshipRecord, TrellisStore } from '@trellis/storage';
import { ChunkRetriever, RETRIEVAL_MODES } from './chunk-retriever';
import type { RankedChunk, RetrievalMode } from './chunk-retriever';
import { GraphRetriever, renderGraph } from './graph-retriever';
import type { GraphRetrieval } from './graph-retriever';

export const MAX_QUERY_CHARS = 8000;
export const MAX_TOP_K = 1000;
const DEFAULT_TOP_K = 5;
const DEFAULT_DEPTH = 2;
const MAX_DEPTH = 4;
const DEFAULT_MAX_RELATIONSHIPS = 20;

/**
 * The retrieval API: validates a request, embeds the question once, and runs chunk, graph
 * or combined retrieval. Responses use the gRPC contract's shapes.
 */
export class RetrievalService {
  private readonly graphs: GraphRetriever;
  private readonly chunks: ChunkRetriever;

  constructor(
    private readonly store: TrellisStore,
    private readonly embedder: EmbeddingProvider,
  ) {
    this.graphs = new GraphRetriever(store);
    this.chunks = new ChunkRetriever(store);
  }

  async retrieveChunks(tenant: TenantScope, request: v1.RetrieveChunksRequest): Promise<v1.RetrieveChunksResponse> {
    const query = validateQuery(request.query);
    const mode = validateMode(request.mode);
    const k = validateTopK(request.topK);
    const scope = kbScope(await requireKnowledgeBase(this.store, tenant, request.knowledgeBase));
    const expansion = request.expansion.trim();
    if (expansion.length > MAX_QUERY_CHARS) throw TrellisError.invalid(`expansion is longer than ${MAX_QUERY_CHARS} characters`);
    const [vector, expansionVector] = await this.embedder.embed(expansion === '' ? [query] : [query, expansion]);
    const graph = lazy(() => this.graphs.retrieve(scope, vector!, query, { depth: DEFAULT_DEPTH, maxRelationships: DEFAULT_MAX_RELATIONSHIPS }));
    const ranked = await this.chunks.retrieve(mode, {
      scope,
      queryVector: vector!,
      queryText: query,
      k,
      filter: { documentIds: request.documentIds },
      graph,
      expansion: expansionVector ? { text: expansion, vector: expansionVector } : undefined,
    });
    return { chunks: await this.toHits(scope, ranked) };
  }

  async retrieveGraph(tenant: TenantScope, request: v1.RetrieveGraphRequest): Promise<v1.GraphContext> {
    const query = validateQuery(request.query);
    const scope = kbScope(await requireKnowledgeBase(this.store, tenant, request.knowledgeBase));
    const [vector] = await this.embedder.embed([query]);
    const graph = await this.graphs.retrieve(scope, vector!, query, graphOptions(request.depth, request.maxRelationships));
    return this.toGraphContext(scope, graph);
  }

  /**
   * Graph first; the question is then refined with the names of the entities the graph
   * found most relevant, and chunks are retrieved for the question and, at lower weight, for
   * the refined question.
   */
  async retrieve(tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse> {
    const query = validateQuery(request.query);
    const mode = validateMode(request.mode);
    const k = validateTopK(request.topK);
    const scope = kbScope(await requireKnowledgeBase(this.store, tenant, request.knowledgeBase));
    const [vector] = await this.embedder.embed([query]);
    const graph = await this.graphs.retrieve(scope, vector!, query, graphOptions(request.depth, 0));
    const refinedQuery = refineQuestionWithEntities(query, graph.entities.map((e) => e.name));
    const [refinedVector] = refinedQuery === query ? [undefined] : await this.embedder.embed([refinedQuery]);
    const ranked = await this.chunks.retrieve(mode, {
      scope,
      queryVector: vector!,
      queryText: query,
      k,
      graph: async () => graph,
      expansion: refinedVector ? { text: refinedQuery, vector: refinedVector } : undefined,
    });
    return { graph: await this.toGraphContext(scope, graph), chunks: await this.toHits(scope, ranked), refinedQuery };
  }

  private async toHits(scope: KbScope, ranked: RankedChunk[]): Promise<v1.ChunkHit[]> {
    const documentIds = [...new Set(ranked.map((r) => r.chunk.documentId))];
    const documents = new Map((await Promise.all(documentIds.map((id) => this.store.getDocument(scope, id)))).flatMap((d) => (d ? [[d.id, d] as const] : [])));
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
      };
    });
  }

  private async toGraphContext(scope: KbScope, graph: GraphRetrieval): Promise<v1.GraphContext> {
    const chunkIds = await this.store.chunkIdsForRelationships(scope, graph.relationships.map((r) => r.relationship.id));
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

export function toEntityMessage(e: EntityRecord): v1.Entity {
  return { id: e.id, name: e.name, type: e.type, description: e.description, mentionCount: e.mentionCount };
}

export function toRelationshipMessage(r: RelationshipRecord, chunkIds: string[]): v1.Relationship {
  return {
    id: r.id,
    sourceEntityId: r.sourceId,
    targetEntityId: r.targetId,
    sourceName: r.sourceName,
    targetName: r.targetName,
    label: r.label,
    description: r.description,
    weight: r.weight,
    chunkIds,
  };
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
