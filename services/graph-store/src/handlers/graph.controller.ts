import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/platform';
import { toEntityMessage, toRelationshipMessage } from '@trellis/storage';
import type { RelationshipRecord } from '@trellis/storage';
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
}

function withChunks(r: RelationshipRecord & { chunkIds: string[] }): v1.Relationship {
  return toRelationshipMessage(r, r.chunkIds);
}
