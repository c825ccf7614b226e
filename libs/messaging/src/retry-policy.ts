import { ErrorCode, TrellisError } from '@trellis/contracts';

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 10_000 };

/** Errors that no retry can fix: the event goes straight to the dead-letter topic. */
export function isPoison(error: unknown): boolean {
  if (!(error instanceof TrellisError)) return false;
  return (
    error.code === ErrorCode.InvalidArgument ||
    error.code === ErrorCode.NotFound ||
    error.code === ErrorCode.FailedPrecondition ||
    error.code === ErrorCode.ResourceExhausted
  );
}

/** Whether a failed delivery gets another attempt, or goes to the dead-letter topic now. */
export function shouldRetry(error: unknown, attempt: number, maxAttempts: number): boolean {
  return !isPoison(error) && attempt < maxAttempts;
}

/** Exponential backoff with full jitter for the given (1-based) failed attempt. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
