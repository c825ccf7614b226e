export interface CachedReadingOptions {
  /** A reading younger than this is answered from the cache, without asking the source. */
  readonly maxAgeMs: number;
  /** How long `get()` waits for a refresh before answering with what it has. */
  readonly waitMs: number;
  /** Called with each failed read; the reading is then empty until a read succeeds. */
  readonly onError: (error: unknown) => void;
}

/**
 * A value read from something slow or remote (a broker) at most once per `maxAgeMs`,
 * whatever the rate of `get()` calls (scrapes), with one read in flight at a time. A read
 * that takes longer than `waitMs` does not hold up the caller: it gets the previous reading
 * and the refresh finishes in the background. A failed read empties the reading rather than
 * keeping the last value: a stale number would look like a healthy, flat one.
 */
export class CachedReading<T> {
  private value: T | undefined;
  private readAt = Number.NEGATIVE_INFINITY;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly options: CachedReadingOptions,
  ) {}

  /** The latest reading, refreshed first when it is older than `maxAgeMs`; undefined when there is none. */
  async get(): Promise<T | undefined> {
    if (performance.now() - this.readAt < this.options.maxAgeMs) return this.value;
    this.refreshing ??= this.refresh();
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.waitMs);
      timer.unref();
    });
    await Promise.race([this.refreshing, waited]);
    clearTimeout(timer);
    return this.value;
  }

  private async refresh(): Promise<void> {
    try {
      this.value = await this.read();
    } catch (error) {
      this.value = undefined;
      this.options.onError(error);
    } finally {
      // Failures count as readings too, so a dead source is asked once per maxAge, not per scrape.
      this.readAt = performance.now();
      this.refreshing = undefined;
    }
  }
}
