import { NestFactory } from '@nestjs/core';
import type { INestMicroservice } from '@nestjs/common';
import type { Server } from 'node:http';
import type { TrellisConfig } from '@trellis/config';
import { DocumentIngestionService } from '@trellis/ingestion';
import { startProbeServer } from '@trellis/observability';
import { GrpcExceptionFilter, createHealth, createRuntime, grpcServerOptions } from '@trellis/platform';
import type { Runtime } from '@trellis/platform';
import { StandaloneModule } from './standalone.module';

export interface RunningServer {
  readonly runtime: Runtime;
  readonly grpcAddress: string;
  readonly httpPort: number;
  /** Stops taking requests, lets in-flight work finish, closes the store. */
  close(): Promise<void>;
}

/**
 * Starts Trellis in one process: the six services' modules, the gRPC API (with health and
 * reflection), the HTTP probes and metrics, and the in-process indexing pipeline, which then
 * resumes whatever a previous run left unfinished.
 */
export async function startStandaloneServer(config: TrellisConfig): Promise<RunningServer> {
  const runtime = createRuntime(config);
  const health = createHealth();
  let app: INestMicroservice | undefined;
  let probes: Server | undefined;
  try {
    app = await NestFactory.createMicroservice(StandaloneModule.forRuntime(runtime), {
      ...grpcServerOptions(config, ['knowledge_base', 'graph', 'retrieval', 'chat'], health),
      logger: ['error', 'warn'],
      bufferLogs: false,
    });
    app.useGlobalFilters(new GrpcExceptionFilter(runtime.logger));
    await app.listen();
    const started = await startProbeServer({
      host: config.grpcHost,
      port: config.httpPort,
      registry: runtime.metrics.registry,
      readiness: async () => {
        await runtime.store.ping();
        await runtime.bus.ping();
      },
    });
    probes = started.server;
    await runtime.bus.start();
    const resumed = await app.get(DocumentIngestionService).redriveUnfinished();
    if (resumed > 0) runtime.logger.info({ documents: resumed }, 'resuming unfinished indexing');
    health.setStatus('', 'SERVING');
    const grpcAddress = `${config.grpcHost}:${config.grpcPort}`;
    runtime.logger.info({ grpc: grpcAddress, http: started.port, dataDir: config.dataDir, llm: config.openai.enabled }, 'trellis standalone ready');
    const nest = app;
    return {
      runtime,
      grpcAddress,
      httpPort: started.port,
      close: async () => {
        health.setStatus('', 'NOT_SERVING');
        await nest.close();
        await runtime.bus.stop();
        await new Promise<void>((resolve) => started.server.close(() => resolve()));
        await runtime.store.close();
      },
    };
  } catch (error) {
    await app?.close().catch(() => undefined);
    probes?.close();
    await runtime.store.close();
    throw error;
  }
}
