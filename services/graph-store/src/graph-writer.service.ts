import { ErrorCode, TrellisError, stableId } from '@trellis/contracts';
import type { KbScope, events } from '@trellis/contracts';
import type { EventBus } from '@trellis/messaging';
import type { EmbeddingProvider } from '@trellis/models';
import type { EntityMentionWrite, ExtractionResult, RelationshipMentionWrite, TrellisStore } from '@trellis/storage';
import { normalizeEntityName } from './entity-names';

/**
 * Handles `chunk.extracted`: resolves the chunk's entities against the graph (same
 * normalised name → same entity), writes entities, relationships and their provenance in one
 * transaction, and when the last chunk of a document version is in the graph, removes what
 * older versions of the document left behind.
 */
export class GraphWriterService {
  constructor(
    private readonly store: TrellisStore,
    private readonly bus: EventBus,
    private readonly embedder: EmbeddingProvider,
  ) {}

  async onChunkExtracted(event: events.ChunkExtracted): Promise<void> {
    const ctx = event.context;
    if (!ctx) throw TrellisError.invalid('chunk.extracted event without context');
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    const chunk = await this.store.getChunk(scope, event.chunkId);
    if (chunk === null) return;
    const extraction = await this.store.getCachedExtraction(event.extractionKey);
    if (extraction === null) throw new TrellisError(ErrorCode.FailedPrecondition, `extraction ${event.extractionKey} is missing from the cache`);

    const { entities, relationships } = await this.resolve(scope, extraction);
    await this.store.applyChunkExtraction(scope, chunk.id, entities, relationships);
    await this.store.setChunkStatus(scope, chunk.id, 'graphed');
    await this.completeDocumentIfDone(scope, ctx.documentId, ctx.documentVersion);
    await this.bus.publish(
      'graph.updated',
      ctx.documentId,
      { context: ctx, chunkId: chunk.id, entityCount: entities.length, relationshipCount: relationships.length },
      { 'trellis-tenant': scope.tenantId, 'trellis-kb': scope.kbId },
    );
  }

  async onFailure(event: events.ChunkExtracted, error: Error): Promise<void> {
    const ctx = event.context;
    if (!ctx) return;
    const scope: KbScope = { tenantId: ctx.tenantId, kbId: ctx.knowledgeBaseId };
    await this.store.setChunkStatus(scope, event.chunkId, 'failed', `graph write failed: ${error.message}`);
    await this.store.setDocumentStatus(scope, ctx.documentId, ctx.documentVersion, 'failed', `graph write of chunk ${event.chunkId} failed: ${error.message}`);
  }

  private async resolve(scope: KbScope, extraction: ExtractionResult): Promise<{ entities: EntityMentionWrite[]; relationships: RelationshipMentionWrite[] }> {
    const byName = new Map<string, EntityMentionWrite>();
    const addEntity = (name: string, type: string, description: string) => {
      const normalizedName = normalizeEntityName(name);
      if (normalizedName === '') return undefined;
      const existing = byName.get(normalizedName);
      if (existing) {
        if (existing.description === '' && description !== '') existing.description = description;
        return existing;
      }
      const entity: EntityMentionWrite = {
        entityId: stableId('ent', scope.tenantId, scope.kbId, normalizedName),
        name,
        normalizedName,
        type,
        description,
        embedding: new Float32Array(0),
      };
      byName.set(normalizedName, entity);
      return entity;
    };
    for (const e of extraction.entities) addEntity(e.name, e.type, e.description);
    const relationships: RelationshipMentionWrite[] = [];
    const seen = new Set<string>();
    for (const r of extraction.relationships) {
      const source = addEntity(r.source, 'concept', '');
      const target = addEntity(r.target, 'concept', '');
      if (!source || !target || source === target) continue;
      const relationshipId = stableId('rel', scope.tenantId, scope.kbId, source.normalizedName, r.label, target.normalizedName);
      if (seen.has(relationshipId)) continue;
      seen.add(relationshipId);
      relationships.push({
        relationshipId,
        sourceId: source.entityId,
        targetId: target.entityId,
        label: r.label,
        description: r.description,
        strength: r.strength,
        embedding: new Float32Array(0),
      });
    }
    const entities = [...byName.values()];
    const names = new Map(entities.map((e) => [e.entityId, e.name]));
    const vectors = await this.embedder.embed([
      ...entities.map((e) => `${e.name} (${e.type}): ${e.description}`),
      ...relationships.map((r) => `${names.get(r.sourceId)} ${r.label} ${names.get(r.targetId)}: ${r.description}`),
    ]);
    entities.forEach((e, i) => (e.embedding = vectors[i]!));
    relationships.forEach((r, i) => (r.embedding = vectors[entities.length + i]!));
    return { entities, relationships };
  }

  private async completeDocumentIfDone(scope: KbScope, documentId: string, version: number): Promise<void> {
    const counts = await this.store.countChunksByStatus(scope, documentId);
    const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
    if (total === 0 || (counts.graphed ?? 0) !== total) return;
    const document = await this.store.getDocument(scope, documentId);
    if (document === null || document.version !== version || document.status === 'failed') return;
    await this.store.deleteStaleVersions(scope, documentId, version);
    await this.store.setDocumentStatus(scope, documentId, version, 'graphed');
  }
}
