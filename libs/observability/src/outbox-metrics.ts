import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** The transactional outbox's metrics, registered with the process's others (TrellisMetrics.outbox). */
export class OutboxMetrics {
  readonly published: Counter<'by'>;
  readonly publishFailures: Counter<'by'>;
  readonly waiting: Gauge;

  constructor(registry: Registry) {
    this.published = new Counter({
      name: 'trellis_outbox_published_total',
      help: 'Events published from the transactional outbox, by who published them (stage: right after its commit; relay: left behind by a crash or a broker outage).',
      labelNames: ['by'] as const,
      registers: [registry],
    });
    this.publishFailures = new Counter({
      name: 'trellis_outbox_publish_failures_total',
      help: 'Outbox events the broker did not take once the producer had run out of retries, by who was publishing them (stage or relay); they stay in the outbox for the relay.',
      labelNames: ['by'] as const,
      registers: [registry],
    });
    this.waiting = new Gauge({
      name: 'trellis_outbox_events',
      help: 'Events in the outbox (the whole deployment) older than TRELLIS_OUTBOX_RELAY_AFTER_MS: committed and not yet taken by the broker, as this process counted them at its last relay tick.',
      registers: [registry],
    });
  }
}
