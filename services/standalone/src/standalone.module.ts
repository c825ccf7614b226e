import { Module } from '@nestjs/common';
import type { DynamicModule } from '@nestjs/common';
import { ChatModule } from '@trellis/chat';
import { ChunkingModule } from '@trellis/chunking';
import { ExtractionModule } from '@trellis/extraction';
import { GraphStoreModule } from '@trellis/graph-store';
import { IngestionModule } from '@trellis/ingestion';
import { PlatformModule } from '@trellis/platform';
import type { Runtime } from '@trellis/platform';
import { RetrievalModule, RetrievalService } from '@trellis/retrieval';

/** All six services in one process, sharing one runtime (SQLite store, in-process bus). */
@Module({})
export class StandaloneModule {
  static forRuntime(runtime: Runtime): DynamicModule {
    return {
      module: StandaloneModule,
      imports: [
        PlatformModule.forRuntime(runtime),
        IngestionModule,
        ChunkingModule,
        ExtractionModule,
        GraphStoreModule,
        RetrievalModule,
        ChatModule.register({ imports: [RetrievalModule], retrievalPort: { useExisting: RetrievalService } }),
      ],
    };
  }
}
