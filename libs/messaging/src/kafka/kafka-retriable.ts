/** Whether kafkajs marks the error as one that goes away on its own (a leader or coordinator moving, a broker starting). */
function isRetriable(error: unknown): boolean {
  return error instanceof Error && (error as Error & { retriable?: unknown }).retriable === true;
}

/**
 * Runs `request` until it succeeds, again every `pollMs` while it fails with a retriable error,
 * for at most `timeoutMs`: some admin requests (a group's offsets, a new topic's offsets) are
 * refused for a moment after a broker starts or a coordinator moves, and kafkajs does not retry them.
 */
export async function retryWhileRetriable<T>(request: () => Promise<T>, timeoutMs: number, pollMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await request();
    } catch (error) {
      if (!isRetriable(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}
