/** What a delivery needs from the consumer loop it runs in. */
export interface DeliveryControl {
  /** kafkajs' batch heartbeat: tells the coordinator this member is alive (kafkajs throttles it). */
  heartbeat(): Promise<void>;
  /** True once the bus is stopping or the partition is being taken away: stop retrying, commit nothing. */
  shouldAbandon(): boolean;
}

/** How often a retry wait checks whether it should give up; bounds how long `stop()` waits for a backoff. */
const ABANDON_CHECK_MS = 100;

/**
 * Runs `work` while heartbeating, so that a slow handler does not get its member dropped
 * from the group. A failed heartbeat is ignored here: it means the group is rebalancing,
 * and the commit after the handler fails the same way, which makes kafkajs rejoin.
 */
export async function whileHeartbeating<T>(work: () => Promise<T>, heartbeat: () => Promise<void>, intervalMs: number): Promise<T> {
  const timer = setInterval(() => {
    heartbeat().catch(() => undefined);
  }, intervalMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}

/**
 * Waits out a retry backoff, heartbeating, so the partition stays blocked (later events of the
 * key wait) without the member being dropped. Returns false when the wait was abandoned.
 * A failing heartbeat throws: the group is rebalancing, and leaving the batch lets kafkajs
 * rejoin; the event, not committed, is delivered again to whoever gets the partition.
 */
export async function waitForRetry(delayMs: number, control: DeliveryControl): Promise<boolean> {
  const deadline = Date.now() + delayMs;
  for (let left = delayMs; left > 0; left = deadline - Date.now()) {
    if (control.shouldAbandon()) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(left, ABANDON_CHECK_MS)));
    await control.heartbeat();
  }
  return !control.shouldAbandon();
}
