import { describe, expect, it } from 'vitest';
import { unreadRanges } from './offset-ranges';

describe('unreadRanges', () => {
  it('starts where the group left off, or at the oldest record when it has not committed', () => {
    const ends = [
      { partition: 0, low: '0', high: '5' },
      { partition: 1, low: '0', high: '3' },
      { partition: 2, low: '0', high: '0' },
    ];
    expect(unreadRanges(ends, [{ partition: 0, offset: '2' }, { partition: 1, offset: '-1' }, { partition: 2, offset: '-1' }])).toEqual([
      { partition: 0, from: 2n, to: 5n },
      { partition: 1, from: 0n, to: 3n },
    ]);
  });

  it('skips what retention already deleted, and partitions read to the end', () => {
    const ends = [
      { partition: 0, low: '10', high: '12' },
      { partition: 1, low: '0', high: '4' },
    ];
    expect(unreadRanges(ends, [{ partition: 0, offset: '3' }, { partition: 1, offset: '4' }])).toEqual([{ partition: 0, from: 10n, to: 12n }]);
  });
});
