/**
 * Every failure the domain reports carries one of these codes. Transports map them:
 * gRPC to status codes (see `grpcStatusFor`), event consumers to retry or dead-letter.
 */
export enum ErrorCode {
  InvalidArgument = 'INVALID_ARGUMENT',
  NotFound = 'NOT_FOUND',
  AlreadyExists = 'ALREADY_EXISTS',
  ResourceExhausted = 'RESOURCE_EXHAUSTED',
  FailedPrecondition = 'FAILED_PRECONDITION',
  /** Transient: a dependency is down or overloaded; retrying later may succeed. */
  Unavailable = 'UNAVAILABLE',
  DeadlineExceeded = 'DEADLINE_EXCEEDED',
  Unauthenticated = 'UNAUTHENTICATED',
  PermissionDenied = 'PERMISSION_DENIED',
  Internal = 'INTERNAL',
}

export class TrellisError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    override readonly cause?: unknown,
  ) {
    super(message);
    this.name = 'TrellisError';
  }

  static invalid(message: string): TrellisError {
    return new TrellisError(ErrorCode.InvalidArgument, message);
  }

  static notFound(message: string): TrellisError {
    return new TrellisError(ErrorCode.NotFound, message);
  }

  static unavailable(message: string, cause?: unknown): TrellisError {
    return new TrellisError(ErrorCode.Unavailable, message, cause);
  }
}

/** True when retrying the same work later may succeed (network, overload, timeouts). */
export function isTransient(error: unknown): boolean {
  if (error instanceof TrellisError) {
    return error.code === ErrorCode.Unavailable || error.code === ErrorCode.DeadlineExceeded;
  }
  return false;
}
