import type { TrellisConfig } from '@trellis/config';
import { ChatModule } from '@trellis/chat';
import { ChunkingModule } from '@trellis/chunking';
import { BudgetResumeSchedule, ExtractionModule } from '@trellis/extraction';
import { GraphStoreModule, GraphWriterService } from '@trellis/graph-store';
import { httpApiFromConfig } from '@trellis/http-api';
import { DocumentIngestionService, IngestionModule, SweeperSchedule } from '@trellis/ingestion';
import { startTrellisProcess } from '@trellis/runtime';
import type { RunningProcess } from '@trellis/runtime';
import { RetrievalModule, RetrievalService } from '@trellis/retrieval';

/**
 * Trellis in one process: the six services' modules sharing one runtime (SQLite store and
 * in-process bus in standalone mode), all four gRPC APIs on one port, the HTTP API (REST,
 * OpenAI-compatible) calling them over loopback, and on start the indexing of whatever a
 * previous run left unfinished. A front thread owns the public ports (TRELLIS_FRONT_THREAD).
 */
export function startStandaloneServer(config: TrellisConfig): Promise<RunningProcess> {
  return startTrellisProcess({
    config,
    grpcServices: ['knowledge_base', 'graph', 'retrieval', 'chat'],
    frontThread: config.frontThread,
    httpApi: (runtime) => httpApiFromConfig(config, runtime.logger, runtime.metrics.registry),
    modules: () => [
      IngestionModule,
      ChunkingModule,
      ExtractionModule,
      GraphStoreModule,
      RetrievalModule,
      ChatModule.register({ imports: [RetrievalModule], retrievalPort: { useExisting: RetrievalService } }),
    ],
    afterStart: async (app, runtime) => {
      const resumed = await app.get(DocumentIngestionService).redriveUnfinished();
      if (resumed > 0) runtime.logger.info({ documents: resumed }, 'resuming unfinished indexing');
      const summaries = await app.get(GraphWriterService).refreshPendingSummaries();
      if (summaries > 0) runtime.logger.info({ summaries }, 'finished summaries left pending by the previous run');
      app.get(SweeperSchedule).start();
      app.get(BudgetResumeSchedule).start();
      // In the background: queries are served meanwhile, and wait only for a matrix still loading.
      const warming = performance.now();
      void runtime.warm?.().then(
        () => runtime.logger.info({ ms: Math.round(performance.now() - warming) }, 'vector matrices loaded'),
        (error: unknown) => runtime.logger.warn({ err: error }, 'loading the vector matrices ahead of the first query failed; queries load them'),
      );
    },
  });
}
