import { randomUUID } from 'node:crypto';
import type { TopicName } from '@trellis/contracts';
import type { Admin, Kafka, KafkaMessage, Message } from 'kafkajs';
import type { DeadLetter } from '../event-bus';
import { toError } from '../retry-policy';
import type { KafkaBusLogger } from './kafka-bus.config';
import type { RawEvent } from './event-delivery';
import { deadLetterHeaders, parseDeadLetter } from './kafka-headers';
import type { DeadLetterFailure } from './kafka-headers';
import type { KafkaNames } from './kafka-names';
import { readOffsetRanges } from './offset-range-reader';
import { unreadRanges } from './offset-ranges';
import type { OffsetRange } from './offset-ranges';

/** A dead-letter topic is small; reading it taking longer than this means the cluster is in trouble. */
const READ_TIMEOUT_MS = 30_000;

export interface KafkaDeadLettersDeps {
  readonly kafka: Kafka;
  readonly admin: () => Promise<Admin>;
  readonly names: KafkaNames;
  /** Sends one record with the bus's idempotent producer. */
  readonly send: (topic: string, message: Message) => Promise<void>;
  readonly maxWaitTimeMs: number;
  readonly logger: KafkaBusLogger;
}

/**
 * The `<topic>.dlq` topics: writing dead letters, listing them and replaying them. A Kafka
 * topic cannot be emptied record by record, so what has been replayed is the committed offset
 * of the `trellis-dlq-replay` group, and a dead letter counts as cleared (as the port says
 * replay does) once that offset is past it.
 */
export class KafkaDeadLetters {
  constructor(private readonly deps: KafkaDeadLettersDeps) {}

  /** Keeps the key, the payload bytes and the headers, and adds why and where it failed. */
  async write(event: RawEvent, failure: DeadLetterFailure): Promise<void> {
    const topic = this.deps.names.deadLetterTopic(failure.sourceTopic);
    await this.deps.send(topic, { key: event.key, value: event.value, headers: deadLetterHeaders(event.headers, failure) });
  }

  /** Dead letters not replayed yet, oldest first. */
  async list(topic: TopicName): Promise<DeadLetter[]> {
    const ranges = await this.unreplayed(topic);
    if (ranges.length === 0) return [];
    const records: Array<{ partition: number; message: KafkaMessage }> = [];
    // A group of its own per read: readers sharing a group would split the partitions between them.
    const groupId = `${this.deps.names.group('trellis-dlq-reader')}-${randomUUID()}`;
    try {
      await this.read(topic, groupId, ranges, false, async (partition, message) => {
        records.push({ partition, message });
      });
    } finally {
      await this.deleteGroup(groupId);
    }
    return records.sort(oldestFirst).map(({ message }) => parseDeadLetter(topic, message));
  }

  /** Publishes each dead letter not replayed yet to its topic again; returns how many. */
  async replay(topic: TopicName): Promise<number> {
    const ranges = await this.unreplayed(topic);
    let replayed = 0;
    await this.read(topic, this.deps.names.replayGroup, ranges, true, async (_partition, message) => {
      const letter = parseDeadLetter(topic, message);
      await this.deps.send(this.deps.names.topic(topic), { key: letter.key, value: message.value, headers: { ...letter.headers } });
      replayed++;
    });
    if (replayed > 0) this.deps.logger.info({ topic, replayed }, 'dead letters replayed');
    return replayed;
  }

  /** Asked of the admin API first, so that an empty or fully replayed topic needs no consumer at all. */
  private async unreplayed(topic: TopicName): Promise<OffsetRange[]> {
    const admin = await this.deps.admin();
    const deadLetterTopic = this.deps.names.deadLetterTopic(topic);
    const [ends, committed] = await Promise.all([
      admin.fetchTopicOffsets(deadLetterTopic),
      admin.fetchOffsets({ groupId: this.deps.names.replayGroup, topics: [deadLetterTopic] }),
    ]);
    return unreadRanges(ends, committed.find((c) => c.topic === deadLetterTopic)?.partitions ?? []);
  }

  private read(
    topic: TopicName,
    groupId: string,
    ranges: OffsetRange[],
    commitProgress: boolean,
    onRecord: (partition: number, message: KafkaMessage) => Promise<void>,
  ): Promise<void> {
    const options = { topic: this.deps.names.deadLetterTopic(topic), groupId, ranges, commitProgress, maxWaitTimeMs: this.deps.maxWaitTimeMs, timeoutMs: READ_TIMEOUT_MS };
    return readOffsetRanges(this.deps.kafka, options, onRecord);
  }

  /** The reader group committed nothing; deleting it just keeps the cluster's group list clean. */
  private async deleteGroup(groupId: string): Promise<void> {
    try {
      await (await this.deps.admin()).deleteGroups([groupId]);
    } catch (error) {
      this.deps.logger.warn({ groupId, err: toError(error).message }, 'could not delete dead-letter reader group');
    }
  }
}

function oldestFirst(a: { partition: number; message: KafkaMessage }, b: { partition: number; message: KafkaMessage }): number {
  const byTime = Number(a.message.timestamp) - Number(b.message.timestamp);
  if (byTime !== 0) return byTime;
  if (a.partition !== b.partition) return a.partition - b.partition;
  return Number(BigInt(a.message.offset) - BigInt(b.message.offset));
}
