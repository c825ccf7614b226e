import type { DeliveryOutcome } from './event-delivery';

/** What the runner needs of a record of a partition's batch. */
export interface BatchRecord {
  readonly key: string;
  readonly offset: string;
}

export interface PartitionBatchDeps<R extends BatchRecord> {
  /** Records of distinct keys handled at once (at least 1). */
  readonly concurrency: number;
  readonly deliver: (record: R) => Promise<DeliveryOutcome>;
  /** Told the offset up to which (inclusive) every record is handled or dead-lettered; increasing. */
  readonly commit: (offset: string) => Promise<void>;
  /** True once no further record may start (stopping, or the partition is being taken away). */
  readonly shouldAbandon: () => boolean;
}

/**
 * Handles one partition's batch with records of distinct keys side by side, as the in-process
 * bus does: the records of one key one after another, in offset order, and up to `concurrency`
 * keys at a time, a free slot going to the earliest record whose key is not busy. A partition is shared by many keys (chunk ids, document ids), so one at a
 * time left a consumer with as many events in flight as partitions it held.
 *
 * Offsets are committed up to the first record not yet handled, so a crash or a rebalance
 * redelivers that record and every later one: at least once, as before, with more records
 * handled twice when the crash comes. An abandoned record (stop, rebalance) or a delivery that
 * throws ends the batch: nothing more starts, what runs finishes, the handled prefix is
 * committed, and the error, if any, is thrown.
 */
export async function runPartitionBatch<R extends BatchRecord>(records: readonly R[], deps: PartitionBatchDeps<R>): Promise<void> {
  const pending = new Map<string, number[]>();
  records.forEach((record, index) => {
    const queue = pending.get(record.key);
    if (queue === undefined) pending.set(record.key, [index]);
    else queue.push(index);
  });
  const handled = new Array<boolean>(records.length).fill(false);
  const running = new Map<string, Promise<void>>();
  let stopped = false;
  let failure: { error: unknown } | undefined;

  const handle = async (key: string, index: number): Promise<void> => {
    try {
      if ((await deps.deliver(records[index]!)) === 'abandoned') stopped = true;
      else handled[index] = true;
    } catch (error) {
      stopped = true;
      failure ??= { error };
    }
    running.delete(key);
  };
  // The free key whose waiting record comes first, so the committed prefix moves on.
  const startWhatMay = () => {
    while (!stopped && !deps.shouldAbandon() && running.size < Math.max(1, deps.concurrency)) {
      let first: [string, number[]] | undefined;
      for (const entry of pending) if (!running.has(entry[0]) && (first === undefined || entry[1][0]! < first[1][0]!)) first = entry;
      if (first === undefined) return;
      const [key, queue] = first;
      const index = queue.shift()!;
      if (queue.length === 0) pending.delete(key);
      running.set(key, handle(key, index));
    }
  };

  let committed = 0;
  const commitHandled = async () => {
    let next = committed;
    while (next < records.length && handled[next]) next++;
    if (next === committed) return;
    committed = next;
    try {
      await deps.commit(records[next - 1]!.offset);
    } catch (error) {
      stopped = true;
      failure ??= { error };
    }
  };

  startWhatMay();
  while (running.size > 0) {
    await Promise.race(running.values());
    await commitHandled();
    startWhatMay();
  }
  // Records that finished while the last commit was on its way.
  await commitHandled();
  if (failure !== undefined) throw failure.error;
}
