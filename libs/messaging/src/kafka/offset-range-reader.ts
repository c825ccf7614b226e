import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { toError } from '../retry-policy';
import type { OffsetRange } from './offset-ranges';

export interface RangeReadOptions {
  readonly topic: string;
  readonly groupId: string;
  readonly ranges: readonly OffsetRange[];
  /** Commit each record once `onRecord` succeeded, so the group remembers the progress. */
  readonly commitProgress: boolean;
  readonly maxWaitTimeMs: number;
  readonly timeoutMs: number;
}

/**
 * Reads the given offset ranges of a topic with a short-lived consumer, calling `onRecord` in
 * order per partition, and returns once every range is read. kafkajs has no manual partition
 * assignment, so the consumer joins `groupId` and starts where that group left off (or at the
 * oldest record); records before a range are skipped, the ones after it are left unread.
 */
export async function readOffsetRanges(
  kafka: Kafka,
  options: RangeReadOptions,
  onRecord: (partition: number, message: KafkaMessage) => Promise<void>,
): Promise<void> {
  const unread = new Map(options.ranges.filter((r) => r.from < r.to).map((r) => [r.partition, r]));
  if (unread.size === 0) return;
  let settled = false;
  let settle: (error?: Error) => void = () => undefined;
  const finished = new Promise<void>((resolve, reject) => {
    settle = (error) => {
      settled = true;
      if (error === undefined) resolve();
      else reject(error);
    };
  });
  const timer = setTimeout(
    () => settle(new TrellisError(ErrorCode.DeadlineExceeded, `reading ${options.topic} did not reach its end offsets within ${options.timeoutMs} ms`)),
    options.timeoutMs,
  );

  const readBatch = async ({ batch, resolveOffset, commitOffsetsIfNecessary, uncommittedOffsets, isRunning }: EachBatchPayload): Promise<void> => {
    const range = unread.get(batch.partition);
    if (range === undefined) return;
    for (const message of batch.messages) {
      const offset = BigInt(message.offset);
      if (settled || !isRunning() || offset >= range.to) return;
      if (offset >= range.from) await onRecord(batch.partition, message);
      resolveOffset(message.offset);
      if (options.commitProgress) await commitOffsetsIfNecessary(uncommittedOffsets());
      if (offset + 1n >= range.to) {
        unread.delete(batch.partition);
        if (unread.size === 0) settle();
        return;
      }
    }
  };

  const consumer = kafka.consumer({ groupId: options.groupId, maxWaitTimeInMs: options.maxWaitTimeMs, allowAutoTopicCreation: false });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [options.topic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      // A failure ends the read instead of letting kafkajs retry the batch behind our back.
      eachBatch: (payload) => readBatch(payload).catch((error: unknown) => settle(toError(error))),
    });
    await finished;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
  }
}
