import { Controller, Inject } from '@nestjs/common';
import type { Metadata } from '@grpc/grpc-js';
import { v1 } from '@trellis/contracts';
import { TENANT_RESOLVER, TenantResolver } from '@trellis/grpc-edge';
import { RetrievalService } from '../retrieval.service';

/** gRPC edge of retrieval. */
@Controller()
@v1.RetrievalServiceControllerMethods()
export class RetrievalController implements v1.RetrievalServiceController {
  constructor(
    @Inject(RetrievalService) private readonly retrieval: RetrievalService,
    @Inject(TENANT_RESOLVER) private readonly tenants: TenantResolver,
  ) {}

  retrieveChunks(request: v1.RetrieveChunksRequest, metadata?: Metadata): Promise<v1.RetrieveChunksResponse> {
    return this.retrieval.retrieveChunks(this.tenants.resolve(metadata), request);
  }

  retrieveGraph(request: v1.RetrieveGraphRequest, metadata?: Metadata): Promise<v1.GraphContext> {
    return this.retrieval.retrieveGraph(this.tenants.resolve(metadata), request);
  }

  retrieve(request: v1.RetrieveRequest, metadata?: Metadata): Promise<v1.RetrieveResponse> {
    return this.retrieval.retrieve(this.tenants.resolve(metadata), request);
  }
}
