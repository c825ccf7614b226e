import { INDEXING_CONSUMER_GROUPS } from '@trellis/contracts';
import { topicConsumer } from '@trellis/runtime';
import { ChunkingService } from '../chunking.service';

/** `document.ingested` → ChunkingService, consumer group "chunking". */
export const documentEventsConsumer = topicConsumer({
  topic: 'document.ingested',
  group: INDEXING_CONSUMER_GROUPS['document.ingested'],
  service: ChunkingService,
  handle: (chunking, event) => chunking.onDocumentIngested(event),
  onFailure: (chunking, event, error) => chunking.onFailure(event, error),
});
