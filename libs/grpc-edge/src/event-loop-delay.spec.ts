import { describe, expect, it } from 'vitest';
import { EventLoopDelay, SharedLoopDelay } from './event-loop-delay';

function busyFor(ms: number): void {
  const started = performance.now();
  while (performance.now() - started < ms) {
    // Synchronous work: no timer can run.
  }
}

describe('EventLoopDelay', () => {
  it('reads near zero on an idle loop and grows while the loop is busy', async () => {
    const delay = new EventLoopDelay(5).start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      expect(delay.currentMs()).toBeLessThan(25);
      busyFor(80);
      expect(delay.currentMs()).toBeGreaterThanOrEqual(70);
    } finally {
      delay.stop();
    }
    expect(delay.currentMs()).toBe(0);
  });

  it('reads the loop as running again once told a call ended, not as still behind until the next tick', async () => {
    const delay = new EventLoopDelay(5).start();
    const reader = new SharedLoopDelay(delay.shared, delay.intervalMs);
    try {
      await new Promise((r) => setTimeout(r, 30));
      // A long synchronous call has just ended; the timer has not had its turn yet.
      busyFor(150);
      expect(reader.currentMs()).toBeGreaterThanOrEqual(140);
      delay.markRunning();
      expect(reader.currentMs()).toBeLessThan(20);
      expect(reader.sinceLastTickMs()).toBeLessThan(20);
    } finally {
      delay.stop();
    }
  });

  it('is readable through its shared memory: the same delay, and how long ago the loop last ticked', async () => {
    const delay = new EventLoopDelay(5);
    const reader = new SharedLoopDelay(delay.shared, delay.intervalMs);
    expect(reader.currentMs()).toBe(0);
    expect(reader.sinceLastTickMs()).toBe(Infinity);
    delay.start();
    try {
      await new Promise((r) => setTimeout(r, 30));
      expect(reader.currentMs()).toBeLessThan(25);
      expect(reader.sinceLastTickMs()).toBeLessThan(25);
      busyFor(80);
      expect(reader.currentMs()).toBeGreaterThanOrEqual(70);
      expect(reader.sinceLastTickMs()).toBeGreaterThanOrEqual(75);
    } finally {
      delay.stop();
    }
  });
});
