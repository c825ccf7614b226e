import { describe, expect, it } from 'vitest';
import { TrellisMetrics } from './metrics';

describe('trellis_consumer_lag_messages', () => {
  it('shows what the bus reports, and no series while the bus cannot report', async () => {
    const metrics = new TrellisMetrics('test');
    const errors: string[] = [];
    let brokerUp = true;
    metrics.trackConsumerLag(
      async () => {
        if (!brokerUp) throw new Error('broker unreachable');
        return [
          { topic: 'chunk.ready', group: 'extraction', messages: 12 },
          { topic: 'chunk.extracted', group: 'graph-store', messages: 0 },
        ];
      },
      (error) => errors.push((error as Error).message),
      { maxAgeMs: 0, waitMs: 1_000 },
    );
    const lines = async () => (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('trellis_consumer_lag_messages{'));
    expect(await lines()).toEqual([
      'trellis_consumer_lag_messages{topic="chunk.ready",group="extraction",service="test"} 12',
      'trellis_consumer_lag_messages{topic="chunk.extracted",group="graph-store",service="test"} 0',
    ]);
    brokerUp = false;
    expect(await lines()).toEqual([]);
    expect(errors).toEqual(['broker unreachable']);
  });

  it('has no series in a process that tracks no lag', async () => {
    const scrape = await new TrellisMetrics('test').registry.metrics();
    expect(scrape).not.toMatch(/^trellis_consumer_lag_messages\{/m);
  });
});
