import { ConfigError, loadConfig } from '@trellis/config';
import { TrellisMetrics, createLogger, startProbeServer } from '@trellis/observability';
import { httpApiFromConfig } from './adapters/http-api-mount';

/**
 * The HTTP API as its own deployable service (distributed mode): REST, OpenAPI and the
 * OpenAI-compatible endpoint on TRELLIS_HTTP_PORT beside /healthz, /readyz and /metrics,
 * calling the gRPC services at TRELLIS_HTTP_API_*_ADDRESS. It keeps no state and opens no
 * database or broker connection; readiness is listening, and a gRPC service that is down
 * answers its callers 503 (UNAVAILABLE).
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env, 'trellis-http-api');
  const logger = createLogger(config.serviceName, config.logLevel);
  const api = httpApiFromConfig(config, logger);
  const metrics = new TrellisMetrics(config.serviceName, { namesInLabels: config.metricsNames });
  const probes = await startProbeServer({
    host: config.httpHost,
    port: config.httpApi.port ?? config.httpPort,
    registry: metrics.registry,
    readiness: async () => undefined,
    metricsToken: config.metricsToken,
    ...(config.httpApi.enabled ? { fallback: api.handle } : {}),
  });
  logger.info({ http: probes.port, grpc: config.httpApi.grpcAddress, addresses: config.httpApi.addresses }, `${config.serviceName} ready`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    probes.server.close(() => {
      api.close();
      process.exit(0);
    });
    // Open event streams would hold the close forever.
    probes.server.closeAllConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : `trellis-http-api failed to start: ${(error as Error).stack ?? String(error)}`}\n`);
  process.exit(1);
});
