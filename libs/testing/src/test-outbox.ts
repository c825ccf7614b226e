import { EventOutbox } from '@trellis/messaging';
import type { EventBus, OutboxOptions, OutboxStore, OutboxTelemetry, RelayLease } from '@trellis/messaging';

const QUIET: OutboxTelemetry = { published: () => undefined, failed: () => undefined, waiting: () => undefined, undeleted: () => undefined };

/**
 * The outbox a service under test publishes through: the real EventOutbox over the test's bus
 * (often one that records what it is given) and its real store's repositories, so what a test sees published
 * went through the store's outbox rows as in production.
 */
export function testOutbox(
  bus: Pick<EventBus, 'publish'>,
  store: { readonly outbox: OutboxStore; readonly llmBudget: RelayLease },
  options: Partial<OutboxOptions> = {},
  telemetry: OutboxTelemetry = QUIET,
): EventOutbox {
  return new EventOutbox(bus, store.outbox, store.llmBudget, { publishTimeoutMs: 5_000, relayAfterMs: 10_000, batchSize: 100, leaseMs: 60_000, ...options }, telemetry);
}
