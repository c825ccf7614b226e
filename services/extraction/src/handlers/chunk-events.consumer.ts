import { INDEXING_CONSUMER_GROUPS } from '@trellis/contracts';
import { topicConsumer } from '@trellis/runtime';
import { ExtractionService } from '../extraction.service';

/** `chunk.ready` → ExtractionService, consumer group "extraction". */
export const chunkEventsConsumer = topicConsumer({
  topic: 'chunk.ready',
  group: INDEXING_CONSUMER_GROUPS['chunk.ready'],
  service: ExtractionService,
  handle: (extraction, event) => extraction.onChunkReady(event),
  onFailure: (extraction, event, error) => extraction.onFailure(event, error),
});
