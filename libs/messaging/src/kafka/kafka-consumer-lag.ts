import type { TopicName } from '@trellis/contracts';
import type { Admin } from 'kafkajs';
import type { ConsumerLag } from '../event-bus';
import type { KafkaNames } from './kafka-names';

/** The (group, topics) pairs a bus consumes, by logical names. */
export interface GroupTopics {
  readonly group: string;
  readonly topics: readonly TopicName[];
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
    const committed = await admin.fetchOffsets({ groupId: names.group(group), topics: topics.map((t) => names.topic(t)) });
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
