import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { checkWithin } from './bounded-check';
import { READINESS_TIMEOUT_MS } from './metrics';

export interface ProbeServerOptions {
  readonly host: string;
  readonly port: number;
  /** Listen on this Unix socket instead of host and port (behind the standalone server's front thread). */
  readonly socketPath?: string;
  readonly registry: Registry;
  /** Resolves when every dependency answers; rejects with the reason otherwise. */
  readonly readiness: () => Promise<void>;
  /** /readyz answers 503 when the readiness check has not settled by then. Default READINESS_TIMEOUT_MS (2 s). */
  readonly readinessTimeoutMs?: number;
  /** When set, /metrics answers only requests with `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /** Answers other paths when it returns true (the HTTP API served on the same port); 404 otherwise. */
  readonly fallback?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * `/healthz` (the process runs), `/readyz` (its dependencies answer, within a bounded time)
 * and `/metrics`. These share the main thread with query work: gRPC admission control keeps
 * that work bounded so the probes stay answered under load. (The standalone server's front
 * thread answers /healthz and /readyz itself and passes the rest here.)
 */
export async function startProbeServer(options: ProbeServerOptions): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (path === '/healthz') return send(200, 'ok\n');
    if (path === '/readyz') {
      checkWithin(options.readiness, options.readinessTimeoutMs ?? READINESS_TIMEOUT_MS, 'readiness check').then(
        () => send(200, 'ready\n'),
        (error: Error) => send(503, `not ready: ${error.message}\n`),
      );
      return;
    }
    if (path === '/metrics') {
      if (options.metricsToken !== undefined && !bearerMatches(req.headers.authorization, options.metricsToken)) {
        res.writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' });
        res.end('metrics need Authorization: Bearer <TRELLIS_METRICS_TOKEN>\n');
        return;
      }
      options.registry.metrics().then(
        (body) => send(200, body, options.registry.contentType),
        (error: Error) => send(500, error.message),
      );
      return;
    }
    if (options.fallback?.(req, res)) return;
    send(404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if (options.socketPath !== undefined) server.listen(options.socketPath, () => resolve());
    else server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? (address as AddressInfo).port : 0 };
}

/**
 * An HTTP server on its own port for a handler that answers the paths it owns (returns true);
 * other paths answer 404. The HTTP API uses it when it is not served beside the probes.
 */
export async function listenHttp(host: string, port: number, handle: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    if (!handle(req, res)) res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}

/** Longest wait for HTTP requests in flight at shutdown; open event streams would hold a close forever. */
const HTTP_CLOSE_GRACE_MS = 5_000;

/** Stops accepting, lets requests in flight finish for up to 5 s, then cuts what is left (event streams). */
export function closeHttpServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), HTTP_CLOSE_GRACE_MS);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** Compares in constant time, so the token cannot be guessed byte by byte from response times. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7).trim() : '');
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
