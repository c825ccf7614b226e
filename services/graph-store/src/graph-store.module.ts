import { Inject, Logger, Module } from '@nestjs/common';
import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { CommunityBuilder } from '@trellis/graph';
import type { TrellisConfig } from '@trellis/config';
import { LlmCommunityReporter, MODELS } from '@trellis/models';
import type { Models, TokenUsage } from '@trellis/models';
import { LLM_PRICES, METRICS, estimateCost } from '@trellis/observability';
import type { LlmPriceTable, TrellisMetrics } from '@trellis/observability';
import { CHUNK_REPOSITORY, COMMUNITY_REPOSITORY, CONFIG, DOCUMENT_REPOSITORY, EXTRACTION_CACHE_REPOSITORY, GRAPH_EDIT_REPOSITORY, GRAPH_READ_REPOSITORY, GRAPH_SUMMARY_REPOSITORY, GRAPH_WRITE_REPOSITORY, KNOWLEDGE_BASE_REPOSITORY, LLM_BUDGET_REPOSITORY, LLM_USAGE_REPOSITORY, createSummaryRefresher } from '@trellis/runtime';
import { CoalescingSummaryRefresher } from '@trellis/graph';
import type {
  ChunkRepository,
  CommunityRepository,
  DocumentRepository,
  ExtractionCacheRepository,
  GraphEditRepository,
  GraphReadRepository,
  GraphSummaryRepository,
  GraphWriteRepository,
  KnowledgeBaseRepository,
  LlmBudgetRepository,
  LlmUsageRepository,
} from '@trellis/storage';
import { EntityResolver } from './entity-resolver';
import { GraphQueryService } from './graph-query.service';
import { GraphWriterService } from './graph-writer.service';
import { GraphEditService } from './graph-edit.service';
import { extractionEventsConsumer } from './handlers/extraction-events.consumer';
import { CommunityService } from './community.service';
import { CommunityMetrics } from './community-metrics';
import { CommunityRefreshLoop } from './community-refresh.loop';
import { GraphController } from './handlers/graph.controller';

@Module({
  controllers: [GraphController],
  providers: [
    {
      provide: GraphWriterService,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        documents: DocumentRepository,
        chunks: ChunkRepository,
        extractionCache: ExtractionCacheRepository,
        graphWrites: GraphWriteRepository,
        graphReads: GraphReadRepository,
        graphSummaries: GraphSummaryRepository,
        llmUsage: LlmUsageRepository,
        communities: CommunityRepository,
        models: Models,
        config: TrellisConfig,
        prices: LlmPriceTable,
        metrics: TrellisMetrics,
      ) => {
        const logger = new Logger('GraphWriter');
        const resolver = new EntityResolver(models.llm, (error) => logger.warn(`LLM merge decision failed, entities kept apart: ${error.message}`));
        const costOf = (usage: TokenUsage) => (models.llm === null ? 0 : estimateCost(prices, models.llm.model, usage.inputTokens, usage.outputTokens));
        const summaries = new CoalescingSummaryRefresher(createSummaryRefresher(graphSummaries, models, (message) => logger.warn(message)));
        const repos = { knowledgeBases, documents, chunks, extractionCache, graphWrites, graphReads, graphSummaries, llmUsage, communities };
        return new GraphWriterService(repos, models.embedder, resolver, summaries, config.resolution, models.llm !== null, costOf, () => metrics.entityResolutionRetries.inc());
      },
      inject: [
        KNOWLEDGE_BASE_REPOSITORY,
        DOCUMENT_REPOSITORY,
        CHUNK_REPOSITORY,
        EXTRACTION_CACHE_REPOSITORY,
        GRAPH_WRITE_REPOSITORY,
        GRAPH_READ_REPOSITORY,
        GRAPH_SUMMARY_REPOSITORY,
        LLM_USAGE_REPOSITORY,
        COMMUNITY_REPOSITORY,
        MODELS,
        CONFIG,
        LLM_PRICES,
        METRICS,
      ],
    },
    {
      provide: GraphQueryService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, graphReads: GraphReadRepository) => new GraphQueryService({ knowledgeBases, graphReads }),
      inject: [KNOWLEDGE_BASE_REPOSITORY, GRAPH_READ_REPOSITORY],
    },
    {
      provide: GraphEditService,
      useFactory: (knowledgeBases: KnowledgeBaseRepository, graphReads: GraphReadRepository, graphEdits: GraphEditRepository, communities: CommunityRepository, models: Models) =>
        new GraphEditService({ knowledgeBases, graphReads, graphEdits, communities }, models.embedder),
      inject: [KNOWLEDGE_BASE_REPOSITORY, GRAPH_READ_REPOSITORY, GRAPH_EDIT_REPOSITORY, COMMUNITY_REPOSITORY, MODELS],
    },
    {
      provide: CommunityService,
      useFactory: (
        knowledgeBases: KnowledgeBaseRepository,
        graphReads: GraphReadRepository,
        communities: CommunityRepository,
        llmBudget: LlmBudgetRepository,
        llmUsage: LlmUsageRepository,
        models: Models,
        metrics: TrellisMetrics,
        prices: LlmPriceTable,
      ) => {
        const logger = new Logger('Communities');
        const reporter = models.llm === null ? null : new LlmCommunityReporter(models.llm);
        const builder = new CommunityBuilder(
          graphReads,
          communities,
          { embed: (texts) => models.embedder.embed(texts), writeReport: reporter && ((brief, onUsage) => reporter.write(brief, onUsage)) },
          (error, id) => logger.warn(`LLM report of community ${id} failed, extractive report kept: ${error.message}`),
        );
        const costOf = (usage: TokenUsage) => (models.llm === null ? 0 : estimateCost(prices, models.llm.model, usage.inputTokens, usage.outputTokens));
        return new CommunityService({ knowledgeBases, graphReads, communities, llmBudget, llmUsage }, builder, new CommunityMetrics(metrics), costOf);
      },
      inject: [KNOWLEDGE_BASE_REPOSITORY, GRAPH_READ_REPOSITORY, COMMUNITY_REPOSITORY, LLM_BUDGET_REPOSITORY, LLM_USAGE_REPOSITORY, MODELS, METRICS, LLM_PRICES],
    },
    {
      provide: CommunityRefreshLoop,
      useFactory: (communities: CommunityRepository, service: CommunityService) => {
        const logger = new Logger('Communities');
        return new CommunityRefreshLoop(
          communities,
          (scope) => service.refreshDue(scope),
          (error, scope) => logger.warn(`community refresh${scope ? ` of ${scope.tenantId}/${scope.kbId}` : 's'} failed, retried on the next poll: ${error.message}`),
        );
      },
      inject: [COMMUNITY_REPOSITORY, CommunityService],
    },
    extractionEventsConsumer,
  ],
})
export class GraphStoreModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(@Inject(CommunityRefreshLoop) private readonly communityRefresh: CommunityRefreshLoop) {}

  onApplicationBootstrap(): void {
    this.communityRefresh.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.communityRefresh.stop();
  }
}
