import { Metadata, status } from '@grpc/grpc-js';
import { ErrorCode, TrellisError } from '@trellis/contracts';

const STATUS_BY_CODE: Record<ErrorCode, status> = {
  [ErrorCode.InvalidArgument]: status.INVALID_ARGUMENT,
  [ErrorCode.NotFound]: status.NOT_FOUND,
  [ErrorCode.AlreadyExists]: status.ALREADY_EXISTS,
  [ErrorCode.ResourceExhausted]: status.RESOURCE_EXHAUSTED,
  [ErrorCode.FailedPrecondition]: status.FAILED_PRECONDITION,
  [ErrorCode.Unavailable]: status.UNAVAILABLE,
  [ErrorCode.DeadlineExceeded]: status.DEADLINE_EXCEEDED,
  [ErrorCode.Unauthenticated]: status.UNAUTHENTICATED,
  [ErrorCode.PermissionDenied]: status.PERMISSION_DENIED,
  [ErrorCode.Internal]: status.INTERNAL,
};

/** Node and driver error codes of a lost or refused connection: the caller may retry. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'PROTOCOL_CONNECTION_LOST', 'ER_CON_COUNT_ERROR', 'KafkaJSConnectionError']);

export interface GrpcError {
  code: status;
  message: string;
  /** Trailing metadata sent with the status (e.g. `retry-after-ms` on a shed call). */
  metadata?: Metadata;
}

/**
 * The one mapping from errors to gRPC statuses. Domain errors keep their message; anything
 * else is an internal error whose details stay in the log, not in the response.
 */
export function toGrpcError(error: unknown): { grpc: GrpcError; internal: boolean } {
  if (error instanceof TrellisError) return { grpc: { code: STATUS_BY_CODE[error.code], message: error.message }, internal: error.code === ErrorCode.Internal };
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'number' && code in status && typeof (error as { details?: unknown }).details === 'string') {
    // Already a gRPC status (e.g. from a downstream gRPC call).
    const metadata = (error as { metadata?: unknown }).metadata;
    return { grpc: { code, message: (error as { details: string }).details, ...(metadata instanceof Metadata ? { metadata } : {}) }, internal: false };
  }
  if (typeof code === 'string' && CONNECTION_ERRORS.has(code)) {
    return { grpc: { code: status.UNAVAILABLE, message: 'a backing service (database or broker) is unreachable; retry later' }, internal: true };
  }
  return { grpc: { code: status.INTERNAL, message: 'internal error' }, internal: true };
}
