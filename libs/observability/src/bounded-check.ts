/**
 * Runs a health check that must not hang on a dead dependency: rejects with
 * `<what> timed out after <ms> ms` when the check has not settled by then.
 */
export function checkWithin(check: () => Promise<void>, timeoutMs: number, what: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${timeoutMs} ms`)), timeoutMs);
    timer.unref?.();
  });
  return Promise.race([check(), timeout]).finally(() => clearTimeout(timer));
}
