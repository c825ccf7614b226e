import type { EnvReader } from './env-reader';

/** The gRPC APIs the HTTP API calls, named as TrellisClient names them. */
export type HttpApiUpstream = 'knowledgeBases' | 'graph' | 'retrieval' | 'chat';

/** The HTTP API (REST, OpenAI-compatible) served by standalone and by the http-api service. */
export interface HttpApiSettings {
  /** TRELLIS_HTTP_API: `true` (default) serves it, `false` leaves only probes and metrics on the HTTP port. */
  readonly enabled: boolean;
  /**
   * TRELLIS_HTTP_API_PORT: its own port (0 picks a free one). Unset (the default), it is served
   * on TRELLIS_HTTP_PORT (8080) beside /healthz, /readyz and /metrics, on TRELLIS_HTTP_HOST.
   */
  readonly port?: number;
  /**
   * TRELLIS_HTTP_API_GRPC_ADDRESS: host:port of the gRPC API it calls (a standalone server, or a
   * gateway routing by gRPC service). Unset: the process's own gRPC port on loopback.
   */
  readonly grpcAddress?: string;
  /**
   * TRELLIS_HTTP_API_KNOWLEDGE_BASE_ADDRESS, _GRAPH_ADDRESS, _RETRIEVAL_ADDRESS, _CHAT_ADDRESS:
   * per-API addresses for distributed services reached directly (each falls back to grpcAddress).
   */
  readonly addresses: Partial<Record<HttpApiUpstream, string>>;
  /** TRELLIS_HTTP_API_TIMEOUT_MS: deadline of each gRPC call it makes, a whole chat stream included. Default 120000. */
  readonly timeoutMs: number;
  /** TRELLIS_HTTP_API_PROGRESS_POLL_MS: how often indexing-progress event streams poll the document status. Default 500. */
  readonly progressPollMs: number;
  /** TRELLIS_CONSOLE: `true` (default) serves the web console at `/` beside the API; `false` leaves those paths 404. */
  readonly console: boolean;
  /** TRELLIS_CONSOLE_DIR: the console's built files. Unset: the build in the install (`apps/console/dist`). */
  readonly consoleDir?: string;
}

const UPSTREAM_VARIABLES: Record<HttpApiUpstream, string> = {
  knowledgeBases: 'TRELLIS_HTTP_API_KNOWLEDGE_BASE_ADDRESS',
  graph: 'TRELLIS_HTTP_API_GRAPH_ADDRESS',
  retrieval: 'TRELLIS_HTTP_API_RETRIEVAL_ADDRESS',
  chat: 'TRELLIS_HTTP_API_CHAT_ADDRESS',
};

export function readHttpApiSettings(env: EnvReader): HttpApiSettings {
  const address = (name: string): string | undefined => {
    const value = env.text(name);
    if (value !== undefined && !/^[^:\s]+:\d{1,5}$/.test(value)) env.problems.push(`${name} must be host:port (got "${value}")`);
    return value;
  };
  const addresses: Partial<Record<HttpApiUpstream, string>> = {};
  for (const [api, name] of Object.entries(UPSTREAM_VARIABLES) as Array<[HttpApiUpstream, string]>) {
    const value = address(name);
    if (value !== undefined) addresses[api] = value;
  }
  const consoleDir = env.text('TRELLIS_CONSOLE_DIR');
  const port = env.text('TRELLIS_HTTP_API_PORT') === undefined ? undefined : env.int('TRELLIS_HTTP_API_PORT', 8080, 0, 65535);
  return {
    enabled: env.flag('TRELLIS_HTTP_API', true),
    ...(port !== undefined ? { port } : {}),
    grpcAddress: address('TRELLIS_HTTP_API_GRPC_ADDRESS'),
    addresses,
    timeoutMs: env.int('TRELLIS_HTTP_API_TIMEOUT_MS', 120_000, 100, 3_600_000),
    progressPollMs: env.int('TRELLIS_HTTP_API_PROGRESS_POLL_MS', 500, 20, 60_000),
    console: env.flag('TRELLIS_CONSOLE', true),
    ...(consoleDir !== undefined ? { consoleDir } : {}),
  };
}
