import { describe, expect, it } from 'vitest';
import { inOrder } from './in-order';

describe('inOrder', () => {
  it('runs at most `limit` at once and reports each outcome in the order of the items, errors included', async () => {
    let running = 0;
    let most = 0;
    const finished: number[] = [];
    const reported: string[] = [];
    // Later items finish first: 5 waits 10 ms, 1 waits 50 ms.
    const work = async (n: number) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setTimeout(r, (6 - n) * 10));
      running--;
      finished.push(n);
      if (n === 3) throw new Error('three failed');
      return n * 10;
    };
    await inOrder([1, 2, 3, 4, 5], 3, work, (n, outcome) => reported.push('document' in outcome ? `${n}:${outcome.document}` : `${n}:${(outcome.error as Error).message}`));
    expect(reported).toEqual(['1:10', '2:20', '3:three failed', '4:40', '5:50']);
    expect(most).toBe(3);
    expect(finished).not.toEqual([1, 2, 3, 4, 5]);
  });
});
