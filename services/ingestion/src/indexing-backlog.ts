import { ALL_TOPICS, INDEXING_CONSUMER_GROUPS } from '@trellis/contracts';
import type { EventBus } from '@trellis/messaging';
import { CachedReading } from '@trellis/observability';

/** Resolves true while indexing events are still queued for some stage; never rejects. */
export type IndexingBacklog = () => Promise<boolean>;

/** Longest a caller waits for the broker's answer (a group coordinator may take seconds to load). */
const BACKLOG_WAIT_MS = 15_000;

/**
 * Asks whether indexing events are still queued for any stage of the pipeline (the consumer
 * groups of INDEXING_CONSUMER_GROUPS), wherever those stages run: in this process (standalone's
 * in-process bus) or in other services (Kafka, whose broker knows every group's offsets). After a
 * restart or an outage with a long backlog, work waiting its turn looks stuck, and announcing it
 * again would index it twice.
 *
 * A lag that cannot be read (a broker that will not say, a principal not allowed to describe
 * other groups) counts as none, after `onUnreadable`: announcing twice costs work, while waiting
 * on a question nobody can answer would leave a lost event lost.
 */
export function indexingBacklog(bus: Pick<EventBus, 'consumerLag'>, onUnreadable: (error: Error) => void): IndexingBacklog {
  const consumers = ALL_TOPICS.map((topic) => ({ topic, group: INDEXING_CONSUMER_GROUPS[topic] }));
  // Never an old reading (a stale "nothing queued" would re-drive a backlog), but callers that
  // ask together (a folder uploaded again) share one question to the broker.
  const lag = new CachedReading(() => bus.consumerLag(consumers), {
    maxAgeMs: 0,
    waitMs: BACKLOG_WAIT_MS,
    onError: (error) => onUnreadable(error instanceof Error ? error : new Error(String(error))),
  });
  return async () => (await lag.get())?.some((consumer) => consumer.messages > 0) ?? false;
}
