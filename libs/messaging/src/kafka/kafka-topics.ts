import type { Admin } from 'kafkajs';
import { createKafkaClient } from './kafka-client';
import { resolveKafkaBusConfig } from './kafka-bus.config';
import type { KafkaBusConfig, KafkaBusLogger } from './kafka-bus.config';
import { KafkaNames } from './kafka-names';
import { retryWhileRetriable } from './kafka-retriable';

export interface TopicLayout {
  readonly names: KafkaNames;
  readonly partitions: number;
  readonly replicationFactor: number;
  readonly logger: KafkaBusLogger;
}

/**
 * Creates the bus's topics (each indexing topic and its `.dlq`) that do not exist yet, and
 * returns the names it created. For `trellis topics ensure` and the Helm hook Job, which run
 * it before any service starts.
 */
export async function ensureKafkaTopics(config: KafkaBusConfig): Promise<string[]> {
  const resolved = resolveKafkaBusConfig(config);
  const admin = createKafkaClient(resolved).admin();
  await admin.connect();
  try {
    return await ensureTopicsWith(admin, { ...resolved, names: new KafkaNames(resolved.topicPrefix) });
  } finally {
    await admin.disconnect();
  }
}

export async function ensureTopicsWith(admin: Admin, layout: TopicLayout): Promise<string[]> {
  const wanted = layout.names.allTopics();
  const existing = new Set(await admin.listTopics());
  const missing = wanted.filter((topic) => !existing.has(topic));
  const present = wanted.filter((topic) => existing.has(topic));
  if (present.length > 0) await warnAboutPartitionCounts(admin, present, layout);
  if (missing.length > 0) {
    // Returns false instead of failing when another process created them meanwhile.
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((topic) => ({ topic, numPartitions: layout.partitions, replicationFactor: layout.replicationFactor })),
    });
    await waitUntilServed(admin, missing);
  }
  layout.logger.info({ created: missing, existing: present }, 'kafka topics ensured');
  return missing;
}

/** Longest a new topic may take to be served; a single KRaft broker needs about a second. */
const SERVE_TIMEOUT_MS = 30_000;
const SERVE_POLL_MS = 250;

/**
 * `waitForLeaders` returns once the metadata names a leader, but a KRaft broker answers
 * "not the leader" for a moment longer. Waiting here means that whoever runs after
 * `ensureTopics` (a service started after the Helm Job, a test) can use the topics at once.
 */
async function waitUntilServed(admin: Admin, topics: readonly string[]): Promise<void> {
  for (const topic of topics) await retryWhileRetriable(() => admin.fetchTopicOffsets(topic), SERVE_TIMEOUT_MS, SERVE_POLL_MS);
}

/**
 * Existing topics are never altered: adding partitions moves keys to other partitions and
 * breaks the per-document order of events in flight, which an operator must decide to do.
 */
async function warnAboutPartitionCounts(admin: Admin, topics: string[], layout: TopicLayout): Promise<void> {
  const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
  for (const { name, partitions } of metadata) {
    if (partitions.length !== layout.partitions) {
      layout.logger.warn({ topic: name, partitions: partitions.length, configured: layout.partitions }, 'kafka topic has a different partition count than configured; left as it is');
    }
  }
}
