import { describe, expect, it } from 'vitest';
import { TopK } from './vector-math';

describe('TopK', () => {
  it('keeps the k best, the first offered first among equals, and says the score to reach', () => {
    const top = new TopK<string>(3);
    expect(top.floor).toBe(-Infinity);
    for (const [item, score] of [['a', 0.5], ['b', 0.9], ['c', 0.1]] as const) top.offer(item, score);
    expect(top.floor).toBe(0.1);
    top.offer('d', 0.1);
    top.offer('e', 0.05);
    expect(top.result().map((h) => h.item)).toEqual(['b', 'a', 'c']);
    top.offer('f', 0.7);
    expect(top.floor).toBe(0.5);
    expect(top.result()).toEqual([
      { item: 'b', score: 0.9 },
      { item: 'f', score: 0.7 },
      { item: 'a', score: 0.5 },
    ]);
  });

  it('lets an equal score in by `before`, and holds nothing when k is 0', () => {
    const top = new TopK<number>(2, (a, b) => a < b);
    for (const [item, score] of [[5, 1], [9, 0.5]] as const) top.offer(item, score);
    top.offer(3, 0.5);
    expect(top.result().map((h) => h.item)).toEqual([5, 3]);
    const none = new TopK<number>(0);
    none.offer(1, 1);
    expect(none.floor).toBe(Infinity);
    expect(none.result()).toEqual([]);
  });
});
