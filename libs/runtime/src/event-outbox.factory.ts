import type { TrellisConfig } from '@trellis/config';
import { EventOutbox } from '@trellis/messaging';
import type { EventBus } from '@trellis/messaging';
import type { Logger, TrellisMetrics } from '@trellis/observability';
import type { TrellisRepositories } from '@trellis/storage';
import { IntervalSchedule } from './interval-schedule';

/** Events the relay reads per query. */
const RELAY_BATCH = 500;
/** A relay pass holds the store lease for at most half of this. */
const RELAY_LEASE_MS = 60_000;

/** The process's outbox over its bus and store, reporting to its metrics and log. */
export function createEventOutbox(
  bus: EventBus,
  repositories: Pick<TrellisRepositories, 'outbox' | 'llmBudget'>,
  config: TrellisConfig,
  metrics: TrellisMetrics,
  logger: Logger,
): EventOutbox {
  const { publishTimeoutMs, relayAfterMs } = config.outbox;
  const log = logger.child({ component: 'outbox' });
  return new EventOutbox(bus, repositories.outbox, repositories.llmBudget, { publishTimeoutMs, relayAfterMs, batchSize: RELAY_BATCH, leaseMs: RELAY_LEASE_MS }, {
    published: (by, count) => {
      metrics.outbox.published.inc({ by }, count);
      if (by === 'relay') log.info({ events: count }, 'relayed events left in the outbox');
    },
    failed: (by, count, error) => {
      metrics.outbox.publishFailures.inc({ by }, count);
      log.warn({ events: count, by, err: error.message }, 'the broker did not take events; they wait in the outbox for the relay');
    },
    undeleted: (count, error) => log.warn({ events: count, err: error.message }, 'published events stay in the outbox (delete failed); the relay will publish them again'),
    waiting: (count) => metrics.outbox.waiting.set(count),
  });
}

/** The relay's schedule (TRELLIS_OUTBOX_RELAY_INTERVAL_MS): every process runs one; the store lease lets one pass run at a time. */
export function outboxRelaySchedule(outbox: EventOutbox, config: TrellisConfig, logger: Logger): IntervalSchedule {
  return new IntervalSchedule(() => outbox.relayOnce(), config.outbox.relayIntervalMs, (error) =>
    logger.warn({ component: 'outbox', err: error instanceof Error ? error.message : String(error) }, 'outbox relay pass failed; the next interval tries again'),
  );
}
