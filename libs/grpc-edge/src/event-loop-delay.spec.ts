import { describe, expect, it } from 'vitest';
import { EventLoopDelay } from './event-loop-delay';

describe('EventLoopDelay', () => {
  it('reads near zero on an idle loop and grows while the loop is busy', async () => {
    const delay = new EventLoopDelay(5).start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      expect(delay.currentMs()).toBeLessThan(25);
      const started = performance.now();
      while (performance.now() - started < 80) {
        // Synchronous work: no timer can run.
      }
      expect(delay.currentMs()).toBeGreaterThanOrEqual(70);
    } finally {
      delay.stop();
    }
    expect(delay.currentMs()).toBe(0);
  });
});
