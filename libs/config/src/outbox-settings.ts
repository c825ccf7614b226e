import type { EnvReader } from './env-reader';

/**
 * Every stage writes its events in the transaction of its change (the outbox) and publishes them
 * once committed; the relay publishes what a crash or a broker outage left behind.
 */
export interface OutboxSettings {
  /** TRELLIS_OUTBOX_RELAY_INTERVAL_MS: how often a process looks for events left behind. Default 1000. */
  readonly relayIntervalMs: number;
  /** TRELLIS_OUTBOX_PUBLISH_TIMEOUT_MS: how long a stage waits for the broker before it leaves its events to the relay. Default 10000. */
  readonly publishTimeoutMs: number;
  /**
   * TRELLIS_OUTBOX_RELAY_AFTER_MS: how old an event must be before the relay takes it: longer
   * than the publish timeout, so the relay does not race the stage still publishing it. Default 15000.
   */
  readonly relayAfterMs: number;
}

export function readOutboxSettings(env: EnvReader): OutboxSettings {
  const settings = {
    relayIntervalMs: env.int('TRELLIS_OUTBOX_RELAY_INTERVAL_MS', 1000, 50, 3_600_000),
    publishTimeoutMs: env.int('TRELLIS_OUTBOX_PUBLISH_TIMEOUT_MS', 10_000, 100, 600_000),
    relayAfterMs: env.int('TRELLIS_OUTBOX_RELAY_AFTER_MS', 15_000, 100, 86_400_000),
  };
  if (settings.relayAfterMs <= settings.publishTimeoutMs) {
    env.problems.push('TRELLIS_OUTBOX_RELAY_AFTER_MS must be longer than TRELLIS_OUTBOX_PUBLISH_TIMEOUT_MS, or the relay republishes events a stage is still publishing');
  }
  return settings;
}
