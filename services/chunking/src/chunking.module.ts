import { Module } from '@nestjs/common';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { ChunkingService } from './chunking.service';
import { documentEventsConsumer } from './handlers/document-events.consumer';

@Module({
  providers: [
    {
      provide: ChunkingService,
      useFactory: (store: TrellisStore, bus: EventBus, models: Models) => new ChunkingService(store, bus, models.embedder),
      inject: [STORE, EVENT_BUS, MODELS],
    },
    documentEventsConsumer,
  ],
})
export class ChunkingModule {}
