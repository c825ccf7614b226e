/**
 * The LLM call budget shared by every process on this store (deployment-wide, not per tenant):
 * token buckets for rates and leased slots for concurrency.
 */
export interface LlmBudgetRepository {
  /**
   * A token bucket that holds up to `perMinute` and refills at `perMinute` per minute. Takes
   * `amount` (capped at `perMinute`) and returns 0 when the bucket holds it; otherwise takes
   * nothing and returns the milliseconds until it will. With `force` it always takes, leaving a
   * debt later callers wait for (used to charge what a call cost beyond its estimate). `nowMs`
   * is the caller's clock.
   */
  takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force?: boolean): Promise<number>;
  /**
   * A counting semaphore of `slots` slots under `key`: gives `holder` a free slot until
   * `expiresAtMs` and returns true, or false when every slot is held by a lease that has not
   * expired. A crashed holder's slot frees itself on expiry.
   */
  acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean>;
  releaseLease(key: string, holder: string): Promise<void>;
}
