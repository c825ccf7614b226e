import type { IncomingMessage, ServerResponse } from 'node:http';
import { NestFactory } from '@nestjs/core';
import { Module } from '@nestjs/common';
import type { DynamicModule, INestApplicationContext } from '@nestjs/common';
import { ConfigError, loadConfig } from '@trellis/config';
import type { TrellisConfig } from '@trellis/config';
import { closeHttpServer, listenHttp, loadTelemetrySettings, startProbeServer, startTracing } from '@trellis/observability';
import type { TelemetrySettings, TracingHandle } from '@trellis/observability';
import {
  AdmissionGate,
  EventLoopDelay,
  GrpcAdmissionInterceptor,
  GrpcExceptionFilter,
  GrpcTelemetryInterceptor,
  MalformedRequestInterceptor,
  RequestLimiter,
  TenantResolver,
  createHealth,
  grpcServerOptions,
} from '@trellis/grpc-edge';
import type { TrellisGrpcService } from '@trellis/grpc-edge';
import { documentBacklog } from './document-backlog';
import { applyHeapGrowth } from './heap-growth';
import { coreSockets, startCoreFront } from './front/core-front';
import { outboxRelaySchedule } from './event-outbox.factory';
import type { CoreFront, CoreSockets } from './front/core-front';
import { RunningCalls } from './front/running-calls';
import { RunningCallsInterceptor } from './front/running-calls.interceptor';
import { RuntimeModule } from './runtime.module';
import { createRuntime } from './runtime';
import type { Runtime } from './runtime';

export interface ProcessSpec {
  readonly config: TrellisConfig;
  /** The service modules this process runs. */
  readonly modules: (runtime: Runtime) => DynamicModule['imports'];
  /** The gRPC services it serves; none means no gRPC server (pure event consumers). */
  readonly grpcServices: readonly TrellisGrpcService[];
  /** Runs once the bus delivers events, before the process reports ready. */
  readonly afterStart?: (app: INestApplicationContext, runtime: Runtime) => Promise<void>;
  /** Tracing and metrics settings; read from the environment (`OTEL_*`, `TRELLIS_TRACE_CONTENT`, `TRELLIS_LLM_PRICES`) when omitted. */
  readonly telemetry?: TelemetrySettings;
  /**
   * An HTTP API this process serves (standalone: REST and OpenAI-compatible over its own gRPC
   * API), on the probe port or on `config.httpApi.port`; called once gRPC listens.
   */
  readonly httpApi?: (runtime: Runtime) => HttpApiMount;
  /**
   * Serve the public gRPC and probe ports from a front thread (see `front/`), the process's own
   * servers listening on Unix sockets behind it. Standalone only: its query work is synchronous
   * on the main thread, so without it refusals and health checks wait for that work.
   */
  readonly frontThread?: boolean;
}

/** A request handler that answers the paths it owns (returns true), and what to close on stop. */
export interface HttpApiMount {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => boolean;
  close(): void;
}

export interface RunningProcess {
  readonly runtime: Runtime;
  readonly grpcAddress: string | null;
  readonly httpPort: number;
  /** Port of the HTTP API, when the process serves one (the probe port unless TRELLIS_HTTP_API_PORT is set). */
  readonly httpApiPort: number | null;
  /** Stops taking requests and events, lets in-flight work finish, closes connections. */
  close(): Promise<void>;
}

/**
 * Starts one Trellis process, standalone or one service: infrastructure from config, the
 * given Nest modules, gRPC (with health and reflection) when it serves any, the HTTP probes
 * and metrics, then event delivery.
 */
export async function startTrellisProcess(spec: ProcessSpec): Promise<RunningProcess> {
  const { config } = spec;
  applyHeapGrowth(config.heapGrowthPercent);
  const telemetry = spec.telemetry ?? loadTelemetrySettings(process.env);
  const tracing: TracingHandle = telemetry.tracingEnabled
    ? startTracing({ serviceName: telemetry.serviceName ?? config.serviceName })
    : { started: false, shutdown: async () => undefined };
  const runtime = await createRuntime(config, telemetry).catch(async (error: unknown) => {
    await tracing.shutdown();
    throw error;
  });
  // One process owns the documents API, so only it reports the document backlog.
  if (spec.grpcServices.includes('knowledge_base')) runtime.metrics.trackDocuments(documentBacklog(runtime.repositories));
  // Each process reports the lag of the groups it consumes in (standalone: all of them).
  runtime.metrics.trackConsumerLag(
    () => runtime.bus.consumerLag(),
    (error) => runtime.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'consumer lag could not be read; trellis_consumer_lag_messages is empty until it can'),
  );
  const health = createHealth();
  const loopDelay = new EventLoopDelay();
  const sockets: CoreSockets | undefined = spec.frontThread === true && spec.grpcServices.length > 0 ? coreSockets() : undefined;
  let front: CoreFront | undefined;
  const runningCalls = new RunningCalls();
  @Module({})
  class RootModule {}
  const root: DynamicModule = { module: RootModule, imports: [RuntimeModule.forRuntime(runtime), ...(spec.modules(runtime) ?? [])] };
  let app: INestApplicationContext | undefined;
  // Publishes what a crash or a broker outage left in the outbox (one process at a time, by a store lease).
  const relay = outboxRelaySchedule(runtime.outbox, config, runtime.logger);
  let api: HttpApiMount | undefined;
  try {
    if (spec.grpcServices.length > 0) {
      const micro = await NestFactory.createMicroservice(root, { ...grpcServerOptions(config, spec.grpcServices, health, sockets?.grpcUrl), logger: ['error', 'warn'] });
      micro.useGlobalFilters(new GrpcExceptionFilter(runtime.logger));
      micro.useGlobalInterceptors(new GrpcTelemetryInterceptor(runtime.metrics, telemetry.traceContent), new MalformedRequestInterceptor());
      // After telemetry, so shed calls are counted and traced as RESOURCE_EXHAUSTED too. Behind a front, the front sheds.
      if (config.admission.maxConcurrent > 0 && sockets === undefined) micro.useGlobalInterceptors(admissionControl(config, runtime, loopDelay));
      if (sockets !== undefined) micro.useGlobalInterceptors(new RunningCallsInterceptor(runningCalls, loopDelay));
      await micro.listen();
      app = micro;
    } else {
      app = await NestFactory.createApplicationContext(root, { logger: ['error', 'warn'] });
    }
    const readiness = async () => {
      await runtime.database.ping();
      await runtime.bus.ping();
    };
    runtime.metrics.trackReadiness(readiness);
    api = config.httpApi.enabled ? spec.httpApi?.(runtime) : undefined;
    const shared = api !== undefined && config.httpApi.port === undefined;
    const probes = await startProbeServer({
      host: config.httpHost,
      port: config.httpPort,
      ...(sockets ? { socketPath: sockets.httpSocket } : {}),
      registry: runtime.metrics.registry,
      readiness,
      metricsToken: config.metricsToken,
      ...(shared ? { fallback: api!.handle } : {}),
    });
    if (sockets !== undefined) {
      front = await startCoreFront({ config, services: spec.grpcServices, sockets, loopDelay: loopDelay.start(), runningCalls, readiness, metrics: runtime.metrics, logger: runtime.logger });
    }
    const apiServer = api !== undefined && !shared ? await listenHttp(config.httpHost, config.httpApi.port!, api.handle) : undefined;
    await runtime.bus.start();
    relay.start();
    await spec.afterStart?.(app, runtime);
    health.setStatus('', 'SERVING');
    front?.setServing(true);
    const grpcAddress = spec.grpcServices.length > 0 ? `${config.grpcHost}:${front?.grpcPort ?? config.grpcPort}` : null;
    const httpPort = front?.httpPort ?? probes.port;
    runtime.logger.info({ grpc: grpcAddress, http: httpPort, mode: config.mode, llm: config.openai.enabled, frontThread: front !== undefined }, `${config.serviceName} ready`);
    const nest = app;
    const frontInUse = front;
    return {
      runtime,
      grpcAddress,
      httpPort,
      httpApiPort: apiServer?.port ?? (shared ? httpPort : null),
      close: async () => {
        health.setStatus('', 'NOT_SERVING');
        frontInUse?.setServing(false);
        runtime.availability.close();
        // The public ports first (the front passes the HTTP API's requests in flight through, then drains gRPC).
        await frontInUse?.close();
        loopDelay.stop();
        // HTTP first, while gRPC still answers the HTTP API's calls in flight.
        await Promise.all([probes.server, apiServer?.server].map((server) => server && closeHttpServer(server)));
        api?.close();
        await relay.stop();
        await runtime.bus.stop();
        await nest.close();
        sockets?.remove();
        await runtime.database.close();
        await tracing.shutdown();
      },
    };
  } catch (error) {
    await front?.close().catch(() => undefined);
    sockets?.remove();
    loopDelay.stop();
    api?.close();
    await relay.stop();
    await app?.close().catch(() => undefined);
    await runtime.bus.stop().catch(() => undefined);
    await runtime.database.close().catch(() => undefined);
    await tracing.shutdown().catch(() => undefined);
    throw error;
  }
}

/** The gRPC server's load shedding, its counts reported as `trellis_grpc_requests_in_flight` / `_queued`. */
function admissionControl(config: TrellisConfig, runtime: Runtime, loopDelay: EventLoopDelay): GrpcAdmissionInterceptor {
  const limiter = new RequestLimiter(config.admission, (running, queued) => {
    runtime.metrics.grpcInFlight.set(running);
    runtime.metrics.grpcQueued.set(queued);
  });
  const { maxEventLoopDelayMs } = config.admission;
  const loop = maxEventLoopDelayMs > 0 ? { delay: loopDelay.start(), maxMs: maxEventLoopDelayMs } : undefined;
  return new GrpcAdmissionInterceptor(new AdmissionGate(limiter, loop), new TenantResolver(config.apiKeys, config.internalToken), runtime.metrics);
}

/**
 * The body of every `main.ts`: configuration from the environment, start, a banner, and a
 * graceful stop on SIGTERM/SIGINT. Bad configuration exits listing every problem.
 */
export function runMain(serviceName: string, start: (config: TrellisConfig) => Promise<RunningProcess>, banner?: (p: RunningProcess, config: TrellisConfig) => string): void {
  const boot = async () => {
    const config = loadConfig(process.env, serviceName);
    const running = await start(config);
    if (banner) process.stdout.write(banner(running, config));
    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      running.runtime.logger.info({ signal }, 'shutting down');
      running.close().then(
        () => process.exit(0),
        (error: unknown) => {
          running.runtime.logger.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  };
  boot().catch((error: unknown) => {
    process.stderr.write(`${error instanceof ConfigError ? error.message : `${serviceName} failed to start: ${(error as Error).stack ?? String(error)}`}\n`);
    process.exit(1);
  });
}
