import { describe, expect, it } from 'vitest';
import { batchesByLength } from './sentence-encoder';

const LIMITS = { maxRows: 16, maxTokens: 2048, maxRatio: 1.5 };

describe('batchesByLength', () => {
  it("runs a graph write's short headings apart from its sentences, shortest first", () => {
    // Nine entity headings of 6-8 tokens and four sentences of 30-44, in the order a write asks.
    const lengths = [7, 6, 8, 7, 6, 7, 8, 6, 7, 30, 44, 38, 31];
    const batches = batchesByLength(lengths, LIMITS);
    expect(batches.map((b) => b.map((i) => lengths[i]))).toEqual([
      [6, 6, 6, 7, 7, 7, 7, 8, 8],
      [30, 31, 38, 44],
    ]);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
  });

  it('runs full windows eight at a time, short texts sixteen', () => {
    const lengths = [...Array.from({ length: 20 }, () => 256), ...Array.from({ length: 20 }, () => 40)];
    const sizes = batchesByLength(lengths, LIMITS).map((b) => [lengths[b[0]!], b.length]);
    expect(sizes).toEqual([[40, 16], [40, 4], [256, 8], [256, 8], [256, 4]]);
    // A row longer than the budget alone still runs, alone.
    expect(batchesByLength([3000, 3000], LIMITS)).toEqual([[0], [1]]);
  });

  it('pads no row past the ratio of its own length, and fills no batch past its rows or tokens', () => {
    const lengths = Array.from({ length: 200 }, (_, i) => 3 + ((i * 37) % 250));
    const batches = batchesByLength(lengths, LIMITS);
    for (const batch of batches) {
      const sizes = batch.map((i) => lengths[i]!);
      expect(batch.length).toBeLessThanOrEqual(16);
      expect(batch.length * Math.max(...sizes)).toBeLessThanOrEqual(2048);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(Math.min(...sizes) * 1.5);
    }
    expect(batches.flat()).toHaveLength(200);
    expect(new Set(batches.flat()).size).toBe(200);
    expect(batchesByLength([], LIMITS)).toEqual([]);
  });
});
