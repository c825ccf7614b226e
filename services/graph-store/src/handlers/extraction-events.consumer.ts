import { INDEXING_CONSUMER_GROUPS } from '@trellis/contracts';
import { topicConsumer } from '@trellis/runtime';
import { GraphWriterService } from '../graph-writer.service';

/**
 * `chunk.extracted` → GraphWriterService, consumer group "graph-store". A graph write mostly
 * waits for its knowledge base's summary refresh, which runs one at a time and is shared by
 * the writes that wait together (CoalescingSummaryRefresher): with more writes at once, each
 * refresh (an LLM call of 200 ms, say) serves more chunks. At 8, 300 chunks' writes trailed
 * their extraction by 4.4 s, one LLM summary in flight; at 32, by about 1 s. On Kafka the same
 * holds per process: 16 per partition, two partitions at once by default.
 */
export const extractionEventsConsumer = topicConsumer({
  topic: 'chunk.extracted',
  group: INDEXING_CONSUMER_GROUPS['chunk.extracted'],
  concurrency: 32,
  eventsPerPartition: 16,
  service: GraphWriterService,
  handle: (writer, event) => writer.onChunkExtracted(event),
  onFailure: (writer, event, error) => writer.onFailure(event, error),
});
