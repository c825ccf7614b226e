import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { toEntityMessage, toRelationshipMessage, v1 } from '@trellis/contracts';
import type { GraphEditRecord } from '@trellis/graph';
import { TENANT_RESOLVER, TenantResolver, resolveActor } from '@trellis/grpc-edge';
import type { RelationshipRecord } from '@trellis/storage';
import { GraphQueryService } from '../graph-query.service';
import { GraphEditService } from '../graph-edit.service';
import type { EditContext } from '../graph-edit.service';
import { CommunityService } from '../community.service';
import { toCommunityDetail, toCommunityList, toRebuildResponse } from './community-messages';

/** gRPC edge of graph reads and edits. */
@Controller()
@v1.GraphServiceControllerMethods()
export class GraphController implements v1.GraphServiceController {
  constructor(
    @Inject(GraphQueryService) private readonly graph: GraphQueryService,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
    @Inject(GraphEditService) private readonly edits: GraphEditService,
    @Inject(CommunityService) private readonly communities: CommunityService,
  ) {}

  async searchEntities(request: v1.SearchEntitiesRequest, metadata?: Metadata): Promise<v1.SearchEntitiesResponse> {
    const entities = await this.graph.searchEntities(this.tenants.resolve(metadata), request.knowledgeBase, request.query, request.limit);
    return { entities: entities.map(toEntityMessage) };
  }

  async getEntity(request: v1.GetEntityRequest, metadata?: Metadata): Promise<v1.EntityDetail> {
    const detail = await this.graph.getEntity(this.tenants.resolve(metadata), request.knowledgeBase, request.entity);
    return {
      entity: toEntityMessage(detail.entity),
      relationships: detail.relationships.map(withChunks),
      neighbours: detail.neighbours.map(toEntityMessage),
    };
  }

  async getSubgraph(request: v1.GetSubgraphRequest, metadata?: Metadata): Promise<v1.Subgraph> {
    const graph = await this.graph.getSubgraph(this.tenants.resolve(metadata), request.knowledgeBase, request.entityIds, request.depth, request.maxEntities);
    return { entities: graph.entities.map(toEntityMessage), relationships: graph.relationships.map(withChunks) };
  }

  async exportGraph(request: v1.ExportGraphRequest, metadata?: Metadata): Promise<v1.Subgraph> {
    const graph = await this.graph.exportGraph(this.tenants.resolve(metadata), request.knowledgeBase);
    return { entities: graph.entities.map(toEntityMessage), relationships: graph.relationships.map(withChunks) };
  }

  async updateEntity(request: v1.UpdateEntityRequest, metadata?: Metadata): Promise<v1.Entity> {
    const changes = { name: request.name, type: request.type, description: request.description };
    return toEntityMessage(await this.edits.updateEntity(this.editor(request, metadata), request.entityId, changes));
  }

  async deleteEntity(request: v1.DeleteEntityRequest, metadata?: Metadata): Promise<v1.GraphEdit> {
    return toGraphEditMessage(await this.edits.deleteEntity(this.editor(request, metadata), request.entityId));
  }

  async updateRelationship(request: v1.UpdateRelationshipRequest, metadata?: Metadata): Promise<v1.Relationship> {
    const changes = { label: request.label, description: request.description, weight: request.weight };
    return withChunks(await this.edits.updateRelationship(this.editor(request, metadata), request.relationshipId, changes));
  }

  async deleteRelationship(request: v1.DeleteRelationshipRequest, metadata?: Metadata): Promise<v1.GraphEdit> {
    return toGraphEditMessage(await this.edits.deleteRelationship(this.editor(request, metadata), request.relationshipId));
  }

  async mergeEntities(request: v1.MergeEntitiesRequest, metadata?: Metadata): Promise<v1.MergeEntitiesResponse> {
    const merged = await this.edits.mergeEntities(this.editor(request, metadata), request.sourceEntityId, request.targetEntityId);
    return { edit: toGraphEditMessage(merged.edit), entity: toEntityMessage(merged.entity) };
  }

  async createSynopsis(request: v1.CreateSynopsisRequest, metadata?: Metadata): Promise<v1.EntityDetail> {
    const editor = this.editor(request, metadata);
    const synopsis = await this.edits.createSynopsis(editor, { name: request.name, description: request.description, entityIds: request.entityIds, type: request.type });
    return this.getEntity({ knowledgeBase: request.knowledgeBase, entity: synopsis.id }, metadata);
  }

  async undoGraphEdit(request: v1.UndoGraphEditRequest, metadata?: Metadata): Promise<v1.GraphEdit> {
    return toGraphEditMessage(await this.edits.undo(this.editor(request, metadata), request.editId));
  }

  async listGraphEdits(request: v1.ListGraphEditsRequest, metadata?: Metadata): Promise<v1.ListGraphEditsResponse> {
    const edits = await this.edits.listEdits({ tenant: this.tenants.resolve(metadata), knowledgeBase: request.knowledgeBase }, request.limit);
    return { edits: edits.map(toGraphEditMessage) };
  }

  async listCommunities(request: v1.ListCommunitiesRequest, metadata?: Metadata): Promise<v1.ListCommunitiesResponse> {
    return toCommunityList(await this.communities.list(this.tenants.resolve(metadata), request.knowledgeBase));
  }

  async getCommunity(request: v1.GetCommunityRequest, metadata?: Metadata): Promise<v1.CommunityDetail> {
    return toCommunityDetail(await this.communities.get(this.tenants.resolve(metadata), request.knowledgeBase, request.communityId));
  }

  async rebuildCommunities(request: v1.RebuildCommunitiesRequest, metadata?: Metadata): Promise<v1.RebuildCommunitiesResponse> {
    return toRebuildResponse(await this.communities.rebuild(this.tenants.resolve(metadata), request.knowledgeBase, request.incremental));
  }

  private editor(request: { knowledgeBase: string }, metadata?: Metadata): EditContext {
    const tenant = this.tenants.resolve(metadata);
    return { tenant, knowledgeBase: request.knowledgeBase, actor: resolveActor(metadata, tenant) };
  }
}

function toGraphEditMessage(e: GraphEditRecord): v1.GraphEdit {
  return {
    id: e.id,
    actor: e.actor,
    action: e.action,
    targetIds: e.targetIds,
    before: e.before,
    after: e.after,
    createdAt: e.createdAt,
    undoneAt: e.undoneAt ?? '',
    undoneBy: e.undoneBy ?? '',
  };
}

function withChunks(r: RelationshipRecord & { chunkIds: string[] }): v1.Relationship {
  return toRelationshipMessage(r, r.chunkIds);
}
