import { randomBytes } from 'node:crypto';
import { TrellisError, stableId, validateIdList, withinLength } from '@trellis/contracts';
import type { KbScope, TenantScope } from '@trellis/contracts';
import type { EmbeddingProvider } from '@trellis/models';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { EntityPatch, GraphEditMeta, GraphEditRecord, RelationshipPatch } from '@trellis/graph';
import type { EntityRecord, RelationshipRecord, TrellisRepositories } from '@trellis/storage';
import { normalizeEntityName } from './entity-names';

/** Who edits, in which tenant and knowledge base. */
export interface EditContext {
  tenant: TenantScope;
  knowledgeBase: string;
  actor: string;
}

export interface EntityChanges {
  name?: string;
  type?: string;
  description?: string;
}

export interface RelationshipChanges {
  label?: string;
  description?: string;
  weight?: number;
}

export const SYNOPSIS_TYPE = 'synopsis';
/** Label of the relationships from a synopsis to the entities it summarises. */
export const SYNOPSIS_LABEL = 'summarizes';
const MAX_SYNOPSIS_MEMBERS = 500;
/** Longest description an edit may set: summaries are far shorter (TRELLIS_SUMMARY_MAX_CHARS). */
const MAX_DESCRIPTION_CHARS = 20_000;
const MAX_NAME_CHARS = 500;
const MAX_LOG_LIMIT = 1000;

/**
 * Manual edits of a knowledge base's graph. Validates the request, names the edit (id, actor,
 * time) and hands it to the store, which keeps it as an overlay on the extracted graph and logs it.
 */
export class GraphEditService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'graphReads' | 'graphEdits' | 'communities'>,
    private readonly embedder: EmbeddingProvider,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async updateEntity(ctx: EditContext, entityId: string, changes: EntityChanges): Promise<EntityRecord> {
    requireId(entityId, 'entity_id');
    const patch: EntityPatch = {};
    if (changes.name !== undefined) {
      const name = requireName(changes.name, 'name');
      patch.name = name;
      patch.normalizedName = normalizeEntityName(name);
    }
    if (changes.type !== undefined) patch.type = requireName(changes.type, 'type');
    if (changes.description !== undefined) patch.description = withinLength(changes.description.trim(), 'description', MAX_DESCRIPTION_CHARS);
    if (Object.keys(patch).length === 0) throw TrellisError.invalid('nothing to change: set name, type or description');
    const scope = await this.scope(ctx);
    return this.changed(scope, await this.repos.graphEdits.updateEntity(scope, entityId, patch, this.meta(ctx)));
  }

  /** Resolves the relationship as it now reads, with the chunks that state it. */
  async updateRelationship(ctx: EditContext, relationshipId: string, changes: RelationshipChanges): Promise<RelationshipRecord & { chunkIds: string[] }> {
    requireId(relationshipId, 'relationship_id');
    const patch: RelationshipPatch = {};
    if (changes.label !== undefined) patch.label = requireName(changes.label, 'label');
    if (changes.description !== undefined) patch.description = withinLength(changes.description.trim(), 'description', MAX_DESCRIPTION_CHARS);
    if (changes.weight !== undefined) {
      if (!Number.isFinite(changes.weight)) throw TrellisError.invalid('weight must be a finite number');
      patch.weight = changes.weight;
    }
    if (Object.keys(patch).length === 0) throw TrellisError.invalid('nothing to change: set label, description or weight');
    const scope = await this.scope(ctx);
    const updated = await this.changed(scope, await this.repos.graphEdits.updateRelationship(scope, relationshipId, patch, this.meta(ctx)));
    return { ...updated, chunkIds: (await this.repos.graphReads.chunkIdsForRelationships(scope, [relationshipId])).get(relationshipId) ?? [] };
  }

  async deleteEntity(ctx: EditContext, entityId: string): Promise<GraphEditRecord> {
    requireId(entityId, 'entity_id');
    const scope = await this.scope(ctx);
    const meta = this.meta(ctx);
    await this.changed(scope, await this.repos.graphEdits.deleteEntity(scope, entityId, meta));
    return this.logged(scope, meta.id);
  }

  async deleteRelationship(ctx: EditContext, relationshipId: string): Promise<GraphEditRecord> {
    requireId(relationshipId, 'relationship_id');
    const scope = await this.scope(ctx);
    const meta = this.meta(ctx);
    await this.changed(scope, await this.repos.graphEdits.deleteRelationship(scope, relationshipId, meta));
    return this.logged(scope, meta.id);
  }

  async mergeEntities(ctx: EditContext, sourceId: string, targetId: string): Promise<{ edit: GraphEditRecord; entity: EntityRecord }> {
    requireId(sourceId, 'source_entity_id');
    requireId(targetId, 'target_entity_id');
    const scope = await this.scope(ctx);
    const meta = this.meta(ctx);
    const entity = await this.changed(scope, await this.repos.graphEdits.mergeEntities(scope, sourceId, targetId, meta));
    return { edit: await this.logged(scope, meta.id), entity };
  }

  async createSynopsis(ctx: EditContext, input: { name: string; description: string; entityIds: readonly string[]; type?: string }): Promise<EntityRecord> {
    const name = requireName(input.name, 'name');
    withinLength(input.description, 'description', MAX_DESCRIPTION_CHARS);
    validateIdList(input.entityIds, 'entity_ids');
    const type = input.type === undefined || input.type.trim() === '' ? SYNOPSIS_TYPE : requireName(input.type, 'type');
    const members = [...new Set(input.entityIds.map((id) => id.trim()))];
    if (members.length === 0 || members.includes('')) throw TrellisError.invalid('entity_ids must name at least one entity, none empty');
    if (members.length > MAX_SYNOPSIS_MEMBERS) throw TrellisError.invalid(`a synopsis links at most ${MAX_SYNOPSIS_MEMBERS} entities`);
    const scope = await this.scope(ctx);
    const found = await this.repos.graphReads.getEntities(scope, members);
    const missing = members.filter((id) => !found.some((e) => e.id === id));
    if (missing.length > 0) throw TrellisError.notFound(`entities not found: ${missing.join(', ')}`);
    const meta = this.meta(ctx);
    const description = withinLength(input.description.trim(), 'description', MAX_DESCRIPTION_CHARS);
    const id = stableId('syn', scope.tenantId, scope.kbId, meta.id);
    const vectors = await this.embedder.embed([`${name} (${type}): ${description}`, ...found.map((e) => `${name} ${SYNOPSIS_LABEL} ${e.name}`)]);
    const links = found.map((member, i) => ({
      id: stableId('rel', id, SYNOPSIS_LABEL, member.id),
      sourceId: id,
      targetId: member.id,
      label: SYNOPSIS_LABEL,
      description: '',
      weight: 1,
      embedding: vectors[i + 1]!,
    }));
    const entity = { id, name, normalizedName: normalizeEntityName(name), type, description, embedding: vectors[0]! };
    return this.changed(scope, await this.repos.graphEdits.createManualEntity(scope, entity, links, meta));
  }

  async undo(ctx: EditContext, editId: string): Promise<GraphEditRecord> {
    requireId(editId, 'edit_id');
    const scope = await this.scope(ctx);
    return this.changed(scope, await this.repos.graphEdits.undoGraphEdit(scope, editId, this.meta(ctx)));
  }

  async listEdits(ctx: Omit<EditContext, 'actor'>, limit: number): Promise<GraphEditRecord[]> {
    if (limit < 0 || limit > MAX_LOG_LIMIT) throw TrellisError.invalid(`limit must be between 1 and ${MAX_LOG_LIMIT}`);
    return this.repos.graphEdits.listGraphEdits(await this.scope(ctx), limit === 0 ? 50 : limit);
  }

  private async scope(ctx: Omit<EditContext, 'actor'>): Promise<KbScope> {
    return kbScope(await requireKnowledgeBase(this.repos.knowledgeBases, ctx.tenant, ctx.knowledgeBase));
  }

  /** Every edit changes the graph its communities were detected on: their refresh becomes due. */
  private async changed<T>(scope: KbScope, result: T): Promise<T> {
    await this.repos.communities.markCommunitiesChanged(scope, this.clock().toISOString());
    return result;
  }

  /** Ids sort by time (then by chance), the order undo checks later edits in. */
  private meta(ctx: EditContext): GraphEditMeta {
    const at = this.clock();
    return { id: `edit_${at.getTime().toString(36).padStart(9, '0')}_${randomBytes(4).toString('hex')}`, actor: ctx.actor, at: at.toISOString() };
  }

  private async logged(scope: KbScope, editId: string): Promise<GraphEditRecord> {
    const edit = await this.repos.graphEdits.getGraphEdit(scope, editId);
    if (edit === null) throw new Error(`graph edit ${editId} is missing from the log`);
    return edit;
  }
}

function requireId(value: string, field: string): void {
  if (value.trim() === '') throw TrellisError.invalid(`${field} is required`);
}

function requireName(value: string, field: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw TrellisError.invalid(`${field} must not be empty`);
  if (trimmed.length > MAX_NAME_CHARS) throw TrellisError.invalid(`${field} is longer than ${MAX_NAME_CHARS} characters`);
  return trimmed;
}
