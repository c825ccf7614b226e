import type { ServerResponse } from 'node:http';
import type { HttpError } from '../http-status';

const TYPE_BY_STATUS: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  409: 'conflict_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

/** An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`. */
export function openAiErrorBody(error: HttpError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return {
    error: {
      message: error.detail,
      type: TYPE_BY_STATUS[error.status] ?? (error.status >= 500 ? 'api_error' : 'invalid_request_error'),
      param: error.field ?? null,
      code: error.grpcStatus?.toLowerCase() ?? null,
    },
  };
}

/** Writes an error as OpenAI clients expect it, with the same HTTP status the REST API uses. */
export function sendOpenAiError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    ...(error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {}),
  });
  res.end(JSON.stringify(openAiErrorBody(error)));
}
