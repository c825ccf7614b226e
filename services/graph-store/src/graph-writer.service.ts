import { ErrorCode, TrellisError, stableId } from '@trellis/contracts';
import type { KbScope, events } from '@trellis/contracts';
import type { ResolutionDefaults } from '@trellis/config';
import type { EmbeddingProvider, TokenUsage } from '@trellis/models';
import { knowledgeBaseOfEvent } from '@trellis/storage';
import { embedDescribed, entityHeading, relationshipItem } from '@trellis/graph';
import type { EntityMentionWrite, RelationshipMentionWrite, SummaryRefresher } from '@trellis/graph';
import type { ExtractionResult, KnowledgeBaseRecord, TrellisRepositories } from '@trellis/storage';
import { normalizeEntityName } from './entity-names';
import { EntityResolver } from './entity-resolver';
import { LlmUsageMeter } from './llm-usage-meter';
import { graphPolicy } from './resolution-policy';
import type { GraphPolicy } from './resolution-policy';

/** What resolve() works on: an entity of the chunk before it has an id. */
interface ChunkEntity {
  name: string;
  normalizedName: string;
  type: string;
  description: string;
  needsReview: boolean;
}

/** A chunk's extraction, deduplicated by name and embedded, before any entity has an id. */
interface ChunkMentions {
  entities: Array<ChunkEntity & { embedding: Float32Array }>;
  relationships: Array<{ r: ExtractionResult['relationships'][number]; source: ChunkEntity | undefined; target: ChunkEntity | undefined; embedding: Float32Array }>;
}

/** Times a chunk's mentions are resolved when concurrent writes keep creating its entities first. */
const RESOLUTION_ATTEMPTS = 4;

/**
 * Handles `chunk.extracted`: resolves the chunk's entities against the graph (see
 * EntityResolver), writes entities, relationships and their provenance in one transaction,
 * brings the summaries and embeddings its change left pending up to date, and when the last
 * chunk of a document version is in the graph, removes what older versions of the document
 * left behind.
 */
export class GraphWriterService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'chunks' | 'extractionCache' | 'graphWrites' | 'graphReads' | 'graphSummaries' | 'llmUsage' | 'communities'>,
    private readonly embedder: EmbeddingProvider,
    private readonly resolver: EntityResolver,
    /** Shared by the chunk writes of a knowledge base that run together (CoalescingSummaryRefresher). */
    private readonly summaries: Pick<SummaryRefresher, 'refresh'>,
    private readonly defaults: ResolutionDefaults,
    private readonly llmConfigured: boolean,
    /** Estimated US dollars of the graph LLM's usage (summaries, merge decisions). */
    private readonly costOf: (usage: TokenUsage) => number = () => 0,
    /** Called each time a chunk's mentions are resolved again because a concurrent write created one of its entities first. */
    private readonly onResolutionRetry: () => void = () => {},
  ) {}

  async onChunkExtracted(event: events.ChunkExtracted): Promise<void> {
    const ctx = event.context;
    if (!ctx) throw TrellisError.invalid('chunk.extracted event without context');
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    const chunk = await this.repos.chunks.getChunk(scope, event.chunkId);
    if (chunk === null) return;
    const extraction = (await this.repos.extractionCache.getCachedExtraction(scope, event.extractionKey))?.result ?? null;
    if (extraction === null) throw new TrellisError(ErrorCode.FailedPrecondition, `extraction ${event.extractionKey} is missing from the cache`);

    const policy = this.policyFor(await knowledgeBaseOfEvent(ctx, this.repos.knowledgeBases));
    // LLM summaries and merge decisions count towards the document whose chunk caused them.
    const usage = new LlmUsageMeter();
    await this.write(scope, chunk.id, await this.mentionsOf(extraction), policy, usage.record);
    await this.repos.communities.markCommunitiesChanged(scope, new Date().toISOString());
    await this.summaries.refresh(scope, policy.summaryMaxChars, usage.record);
    if (!usage.empty) await this.repos.llmUsage.addLlmUsage(scope, ctx.documentId, ctx.documentVersion, usage.total(this.costOf), 'summary');
    const remaining = await this.repos.chunks.markChunkGraphed(scope, chunk.id);
    if (remaining === 0) await this.completeDocument(scope, ctx.documentId, ctx.documentVersion, policy);
  }

  /**
   * Resolves the chunk's mentions and writes them. When a concurrent write created an entity
   * this one meant to create (two first mentions of one name, written side by side), it resolves
   * again, now comparing the mention with that entity. An id taken by an entity of another name
   * (renamed by hand) is joined, as it always was; and so is everything on the last attempt.
   */
  private async write(scope: KbScope, chunkId: string, mentions: ChunkMentions, policy: GraphPolicy, onUsage: (usage: TokenUsage) => void): Promise<void> {
    const names = new Set(mentions.entities.map((e) => e.normalizedName));
    const takenByOtherNames = new Set<string>();
    for (let attempt = 1; attempt <= RESOLUTION_ATTEMPTS; attempt++) {
      const { entities, relationships, newEntityIds } = await this.resolve(scope, chunkId, mentions, policy, onUsage, takenByOtherNames);
      const checked = attempt < RESOLUTION_ATTEMPTS ? newEntityIds : undefined;
      if ((await this.repos.graphWrites.applyChunkExtraction(scope, chunkId, entities, relationships, checked)) !== 'entity-taken') return;
      this.onResolutionRetry();
      for (const entity of await this.repos.graphReads.getEntities(scope, [...checked!])) {
        if (!names.has(entity.normalizedName)) takenByOtherNames.add(entity.id);
      }
    }
  }

  /**
   * Finishes the summaries a crash left pending (between a graph change and its refresh), in
   * every knowledge base; run at start-up. Resolves to the number saved.
   */
  async refreshPendingSummaries(): Promise<number> {
    let saved = 0;
    for (const scope of await this.repos.graphSummaries.listScopesWithPendingSummaries()) {
      saved += await this.summaries.refresh(scope, (await this.policyOf(scope)).summaryMaxChars);
    }
    return saved;
  }

  async onFailure(event: events.ChunkExtracted, error: Error): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    await this.repos.chunks.setChunkStatus(scope, event.chunkId, 'failed', `graph write failed: ${error.message}`);
    await this.repos.documents.setDocumentStatus(scope, ctx.documentId, ctx.documentVersion, 'failed', `graph write of chunk ${event.chunkId} failed: ${error.message}`);
  }

  private async policyOf(scope: KbScope): Promise<GraphPolicy> {
    return this.policyFor(await this.repos.knowledgeBases.findKnowledgeBase({ tenantId: scope.tenantId }, scope.kbId));
  }

  private policyFor(kb: Pick<KnowledgeBaseRecord, 'settings'> | null): GraphPolicy {
    return graphPolicy(kb?.settings.resolution, this.defaults, this.llmConfigured);
  }

  /** The chunk's entities (one per normalised name) and relationship ends, embedded once for every attempt. */
  private async mentionsOf(extraction: ExtractionResult): Promise<ChunkMentions> {
    // One mention per normalised name and chunk; an endpoint-only mention is flagged for review.
    const byName = new Map<string, ChunkEntity>();
    const addEntity = (name: string, type: string, description: string, needsReview: boolean) => {
      const normalizedName = normalizeEntityName(name);
      if (normalizedName === '') return undefined;
      const existing = byName.get(normalizedName);
      if (existing) {
        if (existing.description === '' && description !== '') existing.description = description;
        existing.needsReview &&= needsReview;
        return existing;
      }
      const entity: ChunkEntity = { name, normalizedName, type, description, needsReview };
      byName.set(normalizedName, entity);
      return entity;
    };
    for (const e of extraction.entities) addEntity(e.name, e.type, e.description, e.needsReview === true);
    const ends = extraction.relationships.map((r) => ({ r, source: addEntity(r.source, 'concept', '', true), target: addEntity(r.target, 'concept', '', true) }));
    const chunkEntities = [...byName.values()];

    const embedded = await embedDescribed(
      (texts) => this.embedder.embed(texts),
      [
        ...chunkEntities.map((e) => ({ heading: entityHeading(e.name, e.type), descriptions: [e.description] })),
        // An end without a name is dropped below; its item only keeps the vectors in step.
        ...ends.map(({ r, source, target }) => relationshipItem(source ?? { name: r.source, type: 'concept' }, r.label, target ?? { name: r.target, type: 'concept' }, [r.description])),
      ],
    );
    return {
      entities: chunkEntities.map((e, i) => ({ ...e, embedding: embedded[i]! })),
      relationships: ends.map((end, i) => ({ ...end, embedding: embedded[chunkEntities.length + i]! })),
    };
  }

  /**
   * Entity ids for the chunk's mentions against the graph as it is now; `newEntityIds` are those
   * neither a candidate nor one of `existing` (ids known to be taken by entities of other names) had.
   */
  private async resolve(
    scope: KbScope,
    chunkId: string,
    mentions: ChunkMentions,
    policy: GraphPolicy,
    onUsage: (usage: TokenUsage) => void,
    existing: ReadonlySet<string>,
  ): Promise<{ entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[]; newEntityIds: Set<string> | undefined }> {
    const names = mentions.entities.map((e) => e.normalizedName);
    const candidates = policy.mode === 'name' ? [] : await this.repos.graphWrites.listEntityCandidates(scope, names);
    const previous = policy.mode === 'name' ? new Map<string, string>() : await this.previousResolution(scope, chunkId);
    const ids = await this.resolver.resolve(scope, chunkId, mentions.entities, candidates, policy, previous, onUsage);
    const idOf = new Map(mentions.entities.map((e, i) => [e.normalizedName, ids[i]!]));
    const entities: EntityMentionWrite[] = mentions.entities.map((m, i) => ({ ...m, entityId: ids[i]! }));
    // By name every mention is its name's one entity, so concurrent first mentions are meant to meet.
    const candidateIds = new Set(candidates.map((c) => c.entity.id));
    const newEntityIds = policy.mode === 'name' ? undefined : new Set(ids.filter((id) => !candidateIds.has(id) && !existing.has(id)));

    const relationships: RelationshipMentionWrite[] = [];
    const seen = new Set<string>();
    for (const { r, source, target, embedding } of mentions.relationships) {
      if (!source || !target) continue;
      const sourceId = idOf.get(source.normalizedName)!;
      const targetId = idOf.get(target.normalizedName)!;
      if (sourceId === targetId) continue;
      const relationshipId = relationshipIdOf(scope, source, sourceId, r.label, target, targetId);
      if (seen.has(relationshipId)) continue;
      seen.add(relationshipId);
      relationships.push({ relationshipId, sourceId, targetId, label: r.label, description: r.description, strength: r.strength, embedding });
    }
    return { entities, relationships, newEntityIds };
  }

  /** Name → entity that chunks with this chunk's content mention; names they split are left out. */
  private async previousResolution(scope: KbScope, chunkId: string): Promise<Map<string, string>> {
    const byName = new Map<string, string | null>();
    for (const { name, entityId } of await this.repos.graphWrites.entityMentionsOfSameContent(scope, chunkId)) {
      const normalizedName = normalizeEntityName(name);
      byName.set(normalizedName, byName.has(normalizedName) && byName.get(normalizedName) !== entityId ? null : entityId);
    }
    return new Map([...byName].filter((entry): entry is [string, string] => entry[1] !== null));
  }

  /** Once the last chunk of the version is in the graph (and again for a replay of one of them: idempotent). */
  private async completeDocument(scope: KbScope, documentId: string, version: number, policy: GraphPolicy): Promise<void> {
    const document = await this.repos.documents.getDocument(scope, documentId);
    if (document === null || document.version !== version || document.status === 'failed') return;
    if ((await this.repos.documents.deleteStaleVersions(scope, documentId, version)) > 0) {
      await this.summaries.refresh(scope, policy.summaryMaxChars);
      await this.repos.communities.markCommunitiesChanged(scope, new Date().toISOString());
    }
    await this.repos.documents.setDocumentStatus(scope, documentId, version, 'graphed');
  }
}

/**
 * Between two first-of-their-name entities the id is the one name-only resolution always gave
 * (names and label), so graphs indexed before embedding resolution keep their relationship ids;
 * an end that is a distinct same-name entity makes the entity ids part of it.
 */
function relationshipIdOf(scope: KbScope, source: ChunkEntity, sourceId: string, label: string, target: ChunkEntity, targetId: string): string {
  const firstOfName = sourceId === EntityResolver.baseId(scope, source.normalizedName) && targetId === EntityResolver.baseId(scope, target.normalizedName);
  return firstOfName
    ? stableId('rel', scope.tenantId, scope.kbId, source.normalizedName, label, target.normalizedName)
    : stableId('rel', scope.tenantId, scope.kbId, sourceId, label, targetId);
}
