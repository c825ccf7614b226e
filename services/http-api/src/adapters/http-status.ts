import { status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { RETRY_AFTER_HEADER } from '@trellis/grpc-edge';

/**
 * The one mapping from gRPC status codes to HTTP status codes. The gRPC servers validate,
 * authorize and map domain errors; the HTTP API only translates the status they chose.
 * FAILED_PRECONDITION is 409: the request conflicts with the resource's current state (a
 * document still indexing, an edit already undone), which the client can change, not a
 * conditional-request header that failed (412, which this API does not use).
 */
const HTTP_BY_GRPC: Partial<Record<status, number>> = {
  [status.INVALID_ARGUMENT]: 400,
  [status.OUT_OF_RANGE]: 400,
  [status.UNAUTHENTICATED]: 401,
  [status.PERMISSION_DENIED]: 403,
  [status.NOT_FOUND]: 404,
  [status.ALREADY_EXISTS]: 409,
  [status.FAILED_PRECONDITION]: 409,
  [status.ABORTED]: 409,
  [status.RESOURCE_EXHAUSTED]: 429,
  [status.CANCELLED]: 499,
  [status.UNIMPLEMENTED]: 501,
  [status.UNAVAILABLE]: 503,
  [status.DEADLINE_EXCEEDED]: 504,
};

/** An error as the HTTP API answers it: status, the message the gRPC status carried, and extra headers. */
export interface HttpError {
  readonly status: number;
  readonly title: string;
  readonly detail: string;
  /** The gRPC status name it came from, when it came from one. */
  readonly grpcStatus?: string;
  /** Seconds, from the `retry-after-ms` trailer of a shed call (429). */
  readonly retryAfterSeconds?: number;
  /** The JSON name of the request field to blame. */
  readonly field?: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  411: 'Length Required',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  499: 'Client Closed Request',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function httpError(statusCode: number, detail: string, extra: Partial<HttpError> = {}): HttpError {
  return { status: statusCode, title: TITLES[statusCode] ?? 'Error', detail, ...extra };
}

function isServiceError(error: unknown): error is ServiceError {
  return typeof (error as Partial<ServiceError>)?.code === 'number' && typeof (error as Partial<ServiceError>).details === 'string';
}

/** Any error the gRPC client threw, as the HTTP error it means; unknown errors are a 500 without internals. */
export function fromGrpcError(error: unknown): HttpError {
  if (!isServiceError(error)) return httpError(500, 'internal error');
  const httpStatus = HTTP_BY_GRPC[error.code] ?? 500;
  const retryAfterMs = Number(error.metadata?.get(RETRY_AFTER_HEADER)[0] ?? NaN);
  return httpError(httpStatus, error.details, {
    grpcStatus: status[error.code],
    ...(httpStatus === 429 && Number.isFinite(retryAfterMs) ? { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterMs / 1000)) } : {}),
  });
}
