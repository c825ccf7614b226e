import { ALL_TOPICS, deadLetterTopic } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';

/** Consumer group that records how far each dead-letter topic has been replayed. */
export const DLQ_REPLAY_GROUP = 'trellis-dlq-replay';

/** Names on the cluster of the bus's topics and groups: the logical name behind the configured prefix. */
export class KafkaNames {
  constructor(readonly prefix: string) {}

  topic(topic: TopicName): string {
    return this.prefix + topic;
  }

  deadLetterTopic(topic: TopicName): string {
    return this.prefix + deadLetterTopic(topic);
  }

  group(group: string): string {
    return this.prefix + group;
  }

  get replayGroup(): string {
    return this.group(DLQ_REPLAY_GROUP);
  }

  /** Every topic the bus uses: each indexing topic and its dead-letter topic. */
  allTopics(): string[] {
    return ALL_TOPICS.flatMap((topic) => [this.topic(topic), this.deadLetterTopic(topic)]);
  }
}
