/** Offsets `[from, to)` of one partition. */
export interface OffsetRange {
  readonly partition: number;
  readonly from: bigint;
  readonly to: bigint;
}

/** A partition's log: first offset kept and high-water mark (next offset to be written), as kafkajs reports them. */
export interface PartitionEnds {
  readonly partition: number;
  readonly low: string;
  readonly high: string;
}

/** A group's committed offset of a partition; kafkajs reports '-1' when there is none. */
export interface CommittedOffset {
  readonly partition: number;
  readonly offset: string;
}

/**
 * What a group has still to read of a topic, up to the high-water marks of this moment:
 * from its committed offset (or the oldest record kept) to the end. Empty ranges are left out.
 */
export function unreadRanges(ends: readonly PartitionEnds[], committed: readonly CommittedOffset[]): OffsetRange[] {
  const committedBy = new Map(committed.map(({ partition, offset }) => [partition, BigInt(offset)]));
  const ranges: OffsetRange[] = [];
  for (const { partition, low, high } of ends) {
    const oldest = BigInt(low);
    const done = committedBy.get(partition) ?? -1n;
    const range = { partition, from: done > oldest ? done : oldest, to: BigInt(high) };
    if (range.from < range.to) ranges.push(range);
  }
  return ranges;
}
