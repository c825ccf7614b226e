import { TrellisError, validateIdList, withinLength } from '@trellis/contracts';
import type { TenantScope } from '@trellis/contracts';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { EntityRecord, RelationshipRecord, TrellisRepositories } from '@trellis/storage';
import { normalizeEntityName } from './entity-names';

const MAX_QUERY_CHARS = 8000;
/** An entity id or name: names are at most a few hundred characters. */
const MAX_ENTITY_REFERENCE_CHARS = 1024;

export interface EntityDetail {
  entity: EntityRecord;
  relationships: Array<RelationshipRecord & { chunkIds: string[] }>;
  neighbours: EntityRecord[];
}

export interface Subgraph {
  entities: EntityRecord[];
  relationships: Array<RelationshipRecord & { chunkIds: string[] }>;
}

const MAX_LIMIT = 1000;

/** Read access to a knowledge base's graph. */
export class GraphQueryService {
  constructor(private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'graphReads'>) {}

  async searchEntities(tenant: TenantScope, knowledgeBase: string, query: string, limit: number): Promise<EntityRecord[]> {
    if (query.trim() === '') throw TrellisError.invalid('query is required');
    withinLength(query, 'query', MAX_QUERY_CHARS);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    return this.repos.graphReads.searchEntitiesByName(kbScope(kb), query, clampLimit(limit, 20));
  }

  async getEntity(tenant: TenantScope, knowledgeBase: string, idOrName: string): Promise<EntityDetail> {
    if (idOrName.trim() === '') throw TrellisError.invalid('entity is required');
    withinLength(idOrName, 'entity', MAX_ENTITY_REFERENCE_CHARS);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const scope = kbScope(kb);
    const entity =
      (await this.repos.graphReads.getEntities(scope, [idOrName]))[0] ??
      (await this.repos.graphReads.findEntitiesByNormalizedName(scope, normalizeEntityName(idOrName))).sort((a, b) => b.mentionCount - a.mentionCount)[0];
    if (entity === undefined) throw TrellisError.notFound(`entity "${idOrName}" not found in knowledge base "${kb.name}"`);
    const relationships = await this.repos.graphReads.relationshipsOfEntities(scope, [entity.id]);
    const neighbourIds = [...new Set(relationships.map((r) => (r.sourceId === entity.id ? r.targetId : r.sourceId)))];
    return {
      entity,
      relationships: await this.withChunks(tenant, kb.id, relationships),
      neighbours: await this.repos.graphReads.getEntities(scope, neighbourIds),
    };
  }

  async getSubgraph(tenant: TenantScope, knowledgeBase: string, entityIds: readonly string[], depth: number, maxEntities: number): Promise<Subgraph> {
    if (entityIds.length === 0) throw TrellisError.invalid('entity_ids must name at least one entity');
    entityIds = validateIdList(entityIds, 'entity_ids');
    if (depth > 4) throw TrellisError.invalid('depth must be at most 4');
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const scope = kbScope(kb);
    const limit = clampLimit(maxEntities, 200);
    const entityIdSet = new Set((await this.repos.graphReads.getEntities(scope, entityIds)).map((e) => e.id));
    // Like every lookup by id: ids that name nothing here are NOT_FOUND, not an empty graph.
    if (entityIdSet.size === 0) throw TrellisError.notFound(`no entity with ${entityIds.length === 1 ? `id ${entityIds[0]}` : 'any of these ids'} in knowledge base "${knowledgeBase}"`);
    const relationships = new Map<string, RelationshipRecord>();
    let frontier = [...entityIdSet];
    for (let hop = 0; hop < Math.max(1, depth) && frontier.length > 0; hop++) {
      const next: string[] = [];
      for (const r of await this.repos.graphReads.relationshipsOfEntities(scope, frontier)) {
        for (const id of [r.sourceId, r.targetId]) {
          if (!entityIdSet.has(id) && entityIdSet.size < limit) {
            entityIdSet.add(id);
            next.push(id);
          }
        }
        if (entityIdSet.has(r.sourceId) && entityIdSet.has(r.targetId)) relationships.set(r.id, r);
      }
      frontier = next;
    }
    return {
      entities: await this.repos.graphReads.getEntities(scope, [...entityIdSet]),
      relationships: await this.withChunks(tenant, kb.id, [...relationships.values()]),
    };
  }

  async exportGraph(tenant: TenantScope, knowledgeBase: string): Promise<Subgraph> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const graph = await this.repos.graphReads.exportGraph(kbScope(kb));
    return { entities: graph.entities, relationships: await this.withChunks(tenant, kb.id, graph.relationships) };
  }

  private async withChunks(tenant: TenantScope, kbId: string, relationships: RelationshipRecord[]): Promise<Array<RelationshipRecord & { chunkIds: string[] }>> {
    const chunks = await this.repos.graphReads.chunkIdsForRelationships({ tenantId: tenant.tenantId, kbId }, relationships.map((r) => r.id));
    return relationships.map((r) => ({ ...r, chunkIds: chunks.get(r.id) ?? [] }));
  }
}

function clampLimit(limit: number, fallback: number): number {
  if (limit === 0) return fallback;
  if (limit < 0 || limit > MAX_LIMIT) throw TrellisError.invalid(`limit must be between 1 and ${MAX_LIMIT}`);
  return limit;
}
