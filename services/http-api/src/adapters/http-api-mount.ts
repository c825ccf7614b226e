import { resolve } from 'node:path';
import { TrellisClient } from '@trellis/client';
import type { TrellisConfig } from '@trellis/config';
import { createHttpApi } from './http-api';
import type { HttpApiHandler, HttpApiOptions } from './http-api';

/** The version the OpenAPI document states: the REST API's own, not the package's. */
export const REST_API_VERSION = 'v1';

/** Where `npm run build` (and the image) put the web console: apps/console/dist of this install, from src/adapters or dist/adapters alike. */
export const BUILT_CONSOLE_DIR = resolve(__dirname, '../../../../apps/console/dist');

/** A gRPC host to dial: a wildcard listening address means this machine. */
function dialHost(host: string): string {
  return host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
}

/**
 * The HTTP API of a configuration: its gRPC client (the process's own gRPC port over loopback
 * unless TRELLIS_HTTP_API_GRPC_ADDRESS or per-API addresses say otherwise), and the handler.
 * Shed calls are not retried here: the HTTP caller gets the 429 with its Retry-After.
 */
export function httpApiFromConfig(config: TrellisConfig, logger: HttpApiOptions['logger'], registry: HttpApiOptions['registry']): { handle: HttpApiHandler; close(): void } {
  const client = new TrellisClient({
    address: config.httpApi.grpcAddress ?? `${dialHost(config.grpcHost)}:${config.grpcPort}`,
    addresses: config.httpApi.addresses,
    timeoutMs: config.httpApi.timeoutMs,
    retryShed: false,
  });
  const consoleDir = config.httpApi.console ? (config.httpApi.consoleDir ?? BUILT_CONSOLE_DIR) : undefined;
  const handle = createHttpApi({
    client,
    maxUploadBytes: config.maxUploadBytes,
    progressPollMs: config.httpApi.progressPollMs,
    version: REST_API_VERSION,
    logger,
    registry,
    ...(consoleDir !== undefined ? { consoleDir } : {}),
  });
  return { handle, close: () => client.close() };
}
