import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/platform';
import type { EntityRecord, RelationshipRecord } from '@trellis/storage';
import { GraphQueryService } from '../graph-query.service';

/** gRPC edge of graph reads. */
@Controller()
@v1.GraphServiceControllerMethods()
export class GraphController implements v1.GraphServiceController {
  constructor(
    @Inject(GraphQueryService) private readonly graph: GraphQueryService,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
  ) {}

  async searchEntities(request: v1.SearchEntitiesRequest, metadata?: Metadata): Promise<v1.SearchEntitiesResponse> {
    const entities = await this.graph.searchEntities(this.tenants.resolve(metadata), request.knowledgeBase, request.query, request.limit);
    return { entities: entities.map(entityMessage) };
  }

  async getEntity(request: v1.GetEntityRequest, metadata?: Metadata): Promise<v1.EntityDetail> {
    const detail = await this.graph.getEntity(this.tenants.resolve(metadata), request.knowledgeBase, request.entity);
    return {
      entity: entityMessage(detail.entity),
      relationships: detail.relationships.map(relationshipMessage),
      neighbours: detail.neighbours.map(entityMessage),
    };
  }

  async getSubgraph(request: v1.GetSubgraphRequest, metadata?: Metadata): Promise<v1.Subgraph> {
    const graph = await this.graph.getSubgraph(this.tenants.resolve(metadata), request.knowledgeBase, request.entityIds, request.depth, request.maxEntities);
    return { entities: graph.entities.map(entityMessage), relationships: graph.relationships.map(relationshipMessage) };
  }

  async exportGraph(request: v1.ExportGraphRequest, metadata?: Metadata): Promise<v1.Subgraph> {
    const graph = await this.graph.exportGraph(this.tenants.resolve(metadata), request.knowledgeBase);
    return { entities: graph.entities.map(entityMessage), relationships: graph.relationships.map(relationshipMessage) };
  }
}

function entityMessage(e: EntityRecord): v1.Entity {
  return { id: e.id, name: e.name, type: e.type, description: e.description, mentionCount: e.mentionCount };
}

function relationshipMessage(r: RelationshipRecord & { chunkIds: string[] }): v1.Relationship {
  return {
    id: r.id,
    sourceEntityId: r.sourceId,
    targetEntityId: r.targetId,
    sourceName: r.sourceName,
    targetName: r.targetName,
    label: r.label,
    description: r.description,
    weight: r.weight,
    chunkIds: r.chunkIds,
  };
}
