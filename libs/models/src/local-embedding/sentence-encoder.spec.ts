import { describe, expect, it } from 'vitest';
import { batchesByLength } from './sentence-encoder';

describe('batchesByLength', () => {
  it("runs a graph write's short headings apart from its sentences, shortest first", () => {
    // Nine entity headings of 6-8 tokens and four sentences of 30-44, in the order a write asks.
    const lengths = [7, 6, 8, 7, 6, 7, 8, 6, 7, 30, 44, 38, 31];
    const batches = batchesByLength(lengths, 16, 1.5);
    expect(batches.map((b) => b.map((i) => lengths[i]))).toEqual([
      [6, 6, 6, 7, 7, 7, 7, 8, 8],
      [30, 31, 38, 44],
    ]);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
  });

  it('pads no row past the ratio of its own length, and fills no batch past its rows', () => {
    const lengths = Array.from({ length: 200 }, (_, i) => 3 + ((i * 37) % 250));
    const batches = batchesByLength(lengths, 16, 1.5);
    for (const batch of batches) {
      const sizes = batch.map((i) => lengths[i]!);
      expect(batch.length).toBeLessThanOrEqual(16);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(Math.min(...sizes) * 1.5);
    }
    expect(batches.flat()).toHaveLength(200);
    expect(new Set(batches.flat()).size).toBe(200);
    expect(batchesByLength([], 16, 1.5)).toEqual([]);
  });
});
