import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { TrellisClient } from '@trellis/client';
import { closeAfterAnswer } from '@trellis/grpc-edge';
import { callerOf } from './api-caller';
import { createConsoleHandler } from './console-static';
import { docsPage } from './docs-page';
import { HttpMetrics } from './http-metrics';
import { fromGrpcError, httpError } from './http-status';
import type { HttpError } from './http-status';
import { handleMcpRequest } from './mcp/mcp-http';
import { handleOpenAi } from './openai/openai-api';
import { sendOpenAiError } from './openai/openai-errors';
import { openApiDocument } from './openapi-document';
import { sendProblem } from './problem-response';
import { JsonBodyError } from './proto-json';
import { HttpFailure } from './request-body';
import { handleRestRoute } from './rest-handler';
import { REST_ROUTES } from './rest-routes';
import { matchRoute } from './route-matcher';

export interface HttpApiOptions {
  /** A client of the four gRPC services; each request uses it as its own caller (`asCaller`). */
  readonly client: TrellisClient;
  /** The same limit the gRPC upload enforces (TRELLIS_MAX_UPLOAD_BYTES). */
  readonly maxUploadBytes: number;
  /** How often the indexing-progress streams poll the document status. */
  readonly progressPollMs: number;
  /** Shown in the OpenAPI document. */
  readonly version: string;
  /** Where errors that are not the client's fault are logged in full. */
  readonly logger: { error(fields: object, message: string): void };
  /** Where the request counts and durations are registered (the process's /metrics). */
  readonly registry: Registry;
  /** The web console's built files, served at every other GET path (SPA fallback); none: those paths are not answered. */
  readonly consoleDir?: string;
}

/** Handles one request: true when it answered it (an HTTP API path, `/api/...`, `/v1/...`, `/mcp`, or the web console), false to let the caller answer. */
export type HttpApiHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/**
 * The HTTP API: REST under /api/v1 (plus /api/openapi.json and /api/docs), the
 * OpenAI-compatible endpoint under /v1 and MCP (streamable HTTP) at /mcp, and the web console
 * (a browser app over the REST API) at every other path. Every operation is a call of the gRPC API through
 * TrellisClient as the HTTP caller; this layer translates JSON and status codes, nothing else.
 */
export function createHttpApi(options: HttpApiOptions): HttpApiHandler {
  const openApi = openApiDocument(options.version);
  const openApiJson = JSON.stringify(openApi);
  const docs = docsPage(openApi);
  const metrics = new HttpMetrics(options.registry);
  const consolePages = options.consoleDir !== undefined ? createConsoleHandler(options.consoleDir) : undefined;
  return (req, res) => {
    const url = requestUrl(req);
    if (url === undefined) return false;
    const path = url.pathname;
    const openAi = path === '/v1' || path.startsWith('/v1/');
    const mcp = path === '/mcp';
    if (!openAi && !mcp && path !== '/api' && !path.startsWith('/api/')) return !PROBE_PATHS.has(path) && (consolePages?.(req, res, path) ?? false);
    let route = fixedRoute(path);
    metrics.observe(req, res, () => route);
    const fail = (error: unknown) => {
      const http = toHttpError(error);
      if (http.status >= 500 && http.grpcStatus === undefined) options.logger.error({ err: error, method: req.method, path }, 'HTTP API request failed');
      // An oversized body is not read: the connection closes instead of being drained.
      if (http.status === 413) closeAfterAnswer(res);
      if (openAi) sendOpenAiError(res, http);
      else sendProblem(res, http, path);
    };
    const run = async () => {
      if (openAi) return handleOpenAi(callerOf(options.client, req), req, res, path);
      // A tool result cannot carry Retry-After: MCP calls the server sheds are sent again within their deadline.
      if (mcp) return handleMcpRequest(callerOf(options.client, req, { retryShed: true }), req, res, url.searchParams, options.version);
      if (req.method === 'GET' && (path === '/api/openapi.json' || path === '/api/docs')) {
        return void res.writeHead(200, { 'content-type': path === '/api/docs' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8' }).end(path === '/api/docs' ? docs : openApiJson);
      }
      const match = matchRoute(REST_ROUTES, req.method ?? 'GET', path);
      if (match === undefined) throw new HttpFailure(httpError(404, `no operation at ${path}; see /api/docs`));
      if ('allowed' in match) {
        res.setHeader('allow', match.allowed.join(', '));
        throw new HttpFailure(httpError(405, `${req.method ?? ''} is not allowed on ${path}; allowed: ${match.allowed.join(', ')}`));
      }
      route = match.route.path;
      const context = { caller: callerOf(options.client, req), maxUploadBytes: options.maxUploadBytes, progressPollMs: options.progressPollMs };
      return handleRestRoute(context, match.route, match.params, req, res, url.searchParams);
    };
    run().catch(fail);
    return true;
  };
}

/** The probe server's own paths: never a page of the console, even on a port of the API's own. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * The request target as a URL. Appended to a fixed origin, so `//host/...` stays a path; a
 * target that still does not parse is not the API's (the caller answers it 404), never a throw
 * that would take the process down.
 */
function requestUrl(req: IncomingMessage): URL | undefined {
  const target = req.url ?? '/';
  if (!target.startsWith('/')) return undefined;
  try {
    return new URL(`http://localhost${target}`);
  } catch {
    return undefined;
  }
}

/** The metrics label of a path outside the REST route table: a fixed path or template, never a name or id from the request. */
function fixedRoute(path: string): string {
  if (['/v1/models', '/v1/chat/completions', '/mcp', '/api/openapi.json', '/api/docs'].includes(path)) return path;
  return /^\/v1\/models\/[^/]+$/.test(path) ? '/v1/models/{model}' : 'unmatched';
}

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpFailure) return error.http;
  if (error instanceof JsonBodyError) return httpError(400, error.message, error.field !== undefined ? { field: error.field } : {});
  return fromGrpcError(error);
}

