import { describe, expect, it } from 'vitest';
import type { events } from '@trellis/contracts';
import { InProcessEventBus } from '@trellis/messaging';
import { TrellisMetrics, createLogger } from '@trellis/observability';
import { SqliteStore } from '@trellis/storage';
import { consumeTopic } from './event-consumer';
import { PipelineStages } from './pipeline-stages';
import { StoreAvailability } from './store-availability';

const ready = (chunkId: string): events.ChunkReady => ({
  context: { tenantId: 't', knowledgeBaseId: 'kb', documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: undefined },
  chunkId,
  contentHash: 'h',
});

/** The value of a counter series with exactly these labels, from a scrape of the registry. */
async function sample(metrics: TrellisMetrics, name: string, labels: string): Promise<number> {
  const line = (await metrics.registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels},service="test"} `));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('consumeTopic metrics', () => {
  it('counts failed attempts, redeliveries and dead letters per topic and group', async () => {
    const store = new SqliteStore(':memory:');
    const logger = createLogger('test', 'silent');
    const metrics = new TrellisMetrics('test');
    const bus = new InProcessEventBus({ retry: { baseDelayMs: 1, maxDelayMs: 2, maxAttempts: 3 } });
    let flakyFailures = 1;
    await consumeTopic(
      { bus, metrics, logger, availability: new StoreAvailability(store, logger), stages: new PipelineStages(store.repositories.documents, logger) },
      'chunk.ready',
      'extraction',
      async (payload) => {
        if (payload.chunkId === 'poison') throw new Error('bad chunk');
        if (payload.chunkId === 'flaky' && flakyFailures-- > 0) throw new Error('transient');
      },
      async () => undefined,
    );
    await bus.start();
    for (const chunk of ['fine', 'flaky', 'poison']) await bus.publish('chunk.ready', chunk, ready(chunk));
    await bus.idle();

    const labels = 'topic="chunk.ready",group="extraction"';
    // flaky: one failure then one redelivery; poison: three attempts, two of them redeliveries.
    expect(await sample(metrics, 'trellis_event_retries_total', labels)).toBe(3);
    expect(await sample(metrics, 'trellis_events_handled_total', `${labels},outcome="error"`)).toBe(4);
    expect(await sample(metrics, 'trellis_events_handled_total', `${labels},outcome="ok"`)).toBe(2);
    expect(await sample(metrics, 'trellis_events_handled_total', `${labels},outcome="dead_letter"`)).toBe(1);
    await store.close();
  });
});
