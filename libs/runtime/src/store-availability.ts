import type { Logger } from '@trellis/observability';
import type { StoreConnection } from '@trellis/storage';

/**
 * Tells a handler failure caused by an unreachable database from one caused by the event,
 * and holds event handling while the database is away: the event stays unacknowledged
 * (its offset uncommitted) instead of burning retries into the dead-letter topic.
 */
export class StoreAvailability {
  private closed = false;

  constructor(
    private readonly store: Pick<StoreConnection, 'ping'>,
    private readonly logger: Logger,
    private readonly pollMs = 1_000,
  ) {}

  async isDown(): Promise<boolean> {
    try {
      await this.store.ping();
      return false;
    } catch {
      return true;
    }
  }

  /** Resolves once the database answers; rejects if the process starts shutting down first. */
  async waitUntilUp(context: object): Promise<void> {
    this.logger.warn(context, 'database unreachable: holding the event until it returns');
    while (await this.isDown()) {
      if (this.closed) throw new Error('shutting down while the database is unreachable; the event will be redelivered');
      await new Promise((resolve) => setTimeout(resolve, this.pollMs));
    }
    this.logger.info(context, 'database reachable again: resuming');
  }

  /** Called at shutdown: handlers waiting for the database give up (and are redelivered later). */
  close(): void {
    this.closed = true;
  }
}

export const STORE_AVAILABILITY = Symbol.for('trellis.store-availability');
