import { Module } from '@nestjs/common';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { GraphQueryService } from './graph-query.service';
import { GraphWriterService } from './graph-writer.service';
import { GraphEditService } from './graph-edit.service';
import { extractionEventsConsumer } from './handlers/extraction-events.consumer';
import { GraphController } from './handlers/graph.controller';

@Module({
  controllers: [GraphController],
  providers: [
    {
      provide: GraphWriterService,
      useFactory: (store: TrellisStore, bus: EventBus, models: Models) => new GraphWriterService(store, bus, models.embedder),
      inject: [STORE, EVENT_BUS, MODELS],
    },
    { provide: GraphQueryService, useFactory: (store: TrellisStore) => new GraphQueryService(store), inject: [STORE] },
    { provide: GraphEditService, useFactory: (store: TrellisStore, models: Models) => new GraphEditService(store, models.embedder), inject: [STORE, MODELS] },
    extractionEventsConsumer,
  ],
})
export class GraphStoreModule {}
