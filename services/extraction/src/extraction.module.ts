import { Module } from '@nestjs/common';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models } from '@trellis/models';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { ExtractionService } from './extraction.service';
import { chunkEventsConsumer } from './handlers/chunk-events.consumer';
import { LlmExtractor } from './llm-extractor';
import { LocalExtractor } from './local-extractor';

@Module({
  providers: [
    {
      provide: ExtractionService,
      // With a language model configured it extracts; otherwise the local NLP extractor does.
      useFactory: (store: TrellisStore, bus: EventBus, models: Models) =>
        new ExtractionService(store, bus, models.llm ? new LlmExtractor(models.llm) : new LocalExtractor()),
      inject: [STORE, EVENT_BUS, MODELS],
    },
    chunkEventsConsumer,
  ],
})
export class ExtractionModule {}
