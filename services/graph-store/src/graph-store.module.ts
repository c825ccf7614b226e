import { Logger, Module } from '@nestjs/common';
import type { TrellisConfig } from '@trellis/config';
import { EVENT_BUS } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import { MODELS } from '@trellis/models';
import type { Models, TokenUsage } from '@trellis/models';
import { LLM_PRICES, estimateCost } from '@trellis/observability';
import type { LlmPriceTable } from '@trellis/observability';
import { CONFIG, createSummaryRefresher } from '@trellis/platform';
import { STORE } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';
import { EntityResolver } from './entity-resolver';
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
      useFactory: (store: TrellisStore, bus: EventBus, models: Models, config: TrellisConfig, prices: LlmPriceTable) => {
        const logger = new Logger('GraphWriter');
        const resolver = new EntityResolver(models.llm, (error) => logger.warn(`LLM merge decision failed, entities kept apart: ${error.message}`));
        const costOf = (usage: TokenUsage) => (models.llm === null ? 0 : estimateCost(prices, models.llm.model, usage.inputTokens, usage.outputTokens));
        return new GraphWriterService(store, bus, models.embedder, resolver, createSummaryRefresher(store, models, (message) => logger.warn(message)), config.resolution, models.llm !== null, costOf);
      },
      inject: [STORE, EVENT_BUS, MODELS, CONFIG, LLM_PRICES],
    },
    { provide: GraphQueryService, useFactory: (store: TrellisStore) => new GraphQueryService(store), inject: [STORE] },
    { provide: GraphEditService, useFactory: (store: TrellisStore, models: Models) => new GraphEditService(store, models.embedder), inject: [STORE, MODELS] },
    extractionEventsConsumer,
  ],
})
export class GraphStoreModule {}
