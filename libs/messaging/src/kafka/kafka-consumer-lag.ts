import type { TopicName } from '@trellis/contracts';
import type { Admin } from 'kafkajs';
import type { ConsumerLag, ConsumerOf } from '../event-bus';
import type { KafkaNames } from './kafka-names';
import { retryWhileRetriable } from './kafka-retriable';

/** The (group, topics) pairs a bus consumes, by logical names. */
export interface GroupTopics {
  readonly group: string;
  readonly topics: readonly TopicName[];
}

/** Longest to wait for a group's coordinator (loading after a broker start, or moving). */
const COORDINATOR_WAIT_MS = 10_000;

/** `consumers` grouped by group, each topic once. */
export function groupTopicsOf(consumers: readonly ConsumerOf[]): GroupTopics[] {
  const topics = new Map<string, Set<TopicName>>();
  for (const { group, topic } of consumers) topics.set(group, (topics.get(group) ?? new Set<TopicName>()).add(topic));
  return [...topics].map(([group, of]) => ({ group, topics: [...of] }));
}

/**
 * Consumer lag from the broker's own bookkeeping, with two admin requests per group and one
 * per topic: the group's committed offsets against each partition's end offset. A partition
 * the group never committed on counts from where a new member would start: the oldest
 * retained offset when consumers read from the beginning (Trellis's default), else nothing.
 */
export async function measureConsumerLag(admin: Admin, names: KafkaNames, groups: readonly GroupTopics[], fromBeginning: boolean): Promise<ConsumerLag[]> {
  const ends = new Map<TopicName, Map<number, { high: number; low: number }>>();
  const endsOf = async (topic: TopicName) => {
    let byPartition = ends.get(topic);
    if (byPartition === undefined) {
      const offsets = await admin.fetchTopicOffsets(names.topic(topic));
      byPartition = new Map(offsets.map((o) => [o.partition, { high: Number(o.high), low: Number(o.low) }]));
      ends.set(topic, byPartition);
    }
    return byPartition;
  };
  const lag: ConsumerLag[] = [];
  for (const { group, topics } of groups) {
    if (topics.length === 0) continue;
    const request = () => admin.fetchOffsets({ groupId: names.group(group), topics: topics.map((t) => names.topic(t)) });
    const committed = await retryWhileRetriable(request, COORDINATOR_WAIT_MS, 200);
    for (const topic of topics) {
      const partitions = committed.find((c) => c.topic === names.topic(topic))?.partitions ?? [];
      const commits = new Map(partitions.map((p) => [p.partition, Number(p.offset)]));
      let messages = 0;
      for (const [partition, { high, low }] of await endsOf(topic)) {
        const offset = commits.get(partition) ?? -1;
        const from = offset >= 0 ? offset : fromBeginning ? low : high;
        messages += Math.max(0, high - from);
      }
      lag.push({ topic, group, messages });
    }
  }
  return lag;
}
