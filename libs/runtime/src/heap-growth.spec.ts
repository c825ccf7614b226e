import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyHeapGrowth } from './heap-growth';

/**
 * A process that applies a growth percent, then keeps 1M small objects alive while it makes
 * medium-lived garbage (arrays that survive a few young collections, as a question's working
 * set does), and prints the largest heap it saw.
 */
function peakHeapMb(percent: number): number {
  const program = `
    require(${JSON.stringify(join(__dirname, 'heap-growth.ts'))}).applyHeapGrowth(${percent});
    const live = [];
    for (let i = 0; i < 1e6; i++) live.push({ i, name: 'entity ' + i });
    const recent = [];
    let peak = 0;
    for (let round = 0; round < 600; round++) {
      recent.push(Array.from({ length: 20000 }, (_, i) => ({ i, text: 'passage ' + i })));
      if (recent.length > 3) recent.shift();
      peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    console.log(live.length === 1e6 ? Math.round(peak / 2 ** 20) : -1);
  `;
  const run = spawnSync(process.execPath, ['--require', require.resolve('tsx/cjs'), '-e', program], { encoding: 'utf8', timeout: 60_000 });
  expect(run.error).toBeUndefined();
  expect(run.status, run.stderr).toBe(0);
  return Number(run.stdout.trim());
}

describe('applyHeapGrowth', () => {
  it('sets V8 --heap-growing-percent, unless node was given one or the percent is 0', () => {
    const set: string[] = [];
    expect(applyHeapGrowth(50, [], (flags) => set.push(flags))).toBe('--heap-growing-percent=50');
    expect(applyHeapGrowth(0, [], (flags) => set.push(flags))).toBeNull();
    expect(applyHeapGrowth(50, ['--heap-growing-percent=200'], (flags) => set.push(flags))).toBeNull();
    expect(applyHeapGrowth(50, ['--heap_growing_percent', '200'], (flags) => set.push(flags))).toBeNull();
    expect(set).toEqual(['--heap-growing-percent=50']);
  });

  it('holds a process with a large live heap and steady garbage to a fraction of the heap V8 grows to by its own rule', () => {
    // Measured: about 370 MB by V8's rule, about 155 MB at 25 % (a 60 MB live set).
    const byV8 = peakHeapMb(0);
    const bounded = peakHeapMb(25);
    expect(byV8).toBeGreaterThan(0);
    expect(bounded).toBeGreaterThan(0);
    expect(bounded).toBeLessThan(0.6 * byV8);
  });
});
