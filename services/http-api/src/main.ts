import { ConfigError, loadConfig } from '@trellis/config';
import { TrellisMetrics, closeHttpServer, createLogger, listenHttp, startProbeServer } from '@trellis/observability';
import { httpApiFromConfig } from './adapters/http-api-mount';

/**
 * The HTTP API as its own deployable service (distributed mode): REST, OpenAPI and the
 * OpenAI-compatible endpoint on TRELLIS_HTTP_API_PORT (the Helm chart: 8081, so /metrics on
 * TRELLIS_HTTP_PORT stays for Prometheus only), or beside the probes when that is unset,
 * calling the gRPC services at TRELLIS_HTTP_API_*_ADDRESS. It keeps no state and opens no
 * database or broker connection; readiness is listening, and a gRPC service that is down
 * answers its callers 503 (UNAVAILABLE).
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env, 'trellis-http-api');
  const logger = createLogger(config.serviceName, config.logLevel);
  const metrics = new TrellisMetrics(config.serviceName, { namesInLabels: config.metricsNames });
  const api = httpApiFromConfig(config, logger, metrics.registry);
  const own = config.httpApi.enabled && config.httpApi.port !== undefined;
  const probes = await startProbeServer({
    host: config.httpHost,
    port: config.httpPort,
    registry: metrics.registry,
    readiness: async () => undefined,
    metricsToken: config.metricsToken,
    ...(config.httpApi.enabled && !own ? { fallback: api.handle } : {}),
  });
  const apiServer = own ? await listenHttp(config.httpHost, config.httpApi.port!, api.handle) : undefined;
  logger.info({ http: probes.port, api: apiServer?.port ?? probes.port, grpc: config.httpApi.grpcAddress, addresses: config.httpApi.addresses }, `${config.serviceName} ready`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    void Promise.all([probes.server, apiServer?.server].map((server) => server && closeHttpServer(server))).then(() => {
      api.close();
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `trellis-http-api failed to start: ${(error as Error).stack ?? String(error)}`}\n`);
  process.exit(1);
});
