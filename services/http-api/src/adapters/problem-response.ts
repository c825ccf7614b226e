import type { ServerResponse } from 'node:http';
import type { HttpError } from './http-status';

/** Writes an error as RFC 9457 `application/problem+json`, with Retry-After on a shed call. */
export function sendProblem(res: ServerResponse, error: HttpError, instance?: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = {
    type: 'about:blank',
    title: error.title,
    status: error.status,
    detail: error.detail,
    ...(instance !== undefined ? { instance } : {}),
    ...(error.grpcStatus !== undefined ? { grpcStatus: error.grpcStatus } : {}),
    ...(error.field !== undefined ? { field: error.field } : {}),
  };
  res.writeHead(error.status, {
    'content-type': 'application/problem+json',
    ...(error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
    ...(error.status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(JSON.stringify(body));
}

export function sendJson(res: ServerResponse, statusCode: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(statusCode, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(JSON.stringify(body));
}
