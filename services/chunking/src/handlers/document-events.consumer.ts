import { topicConsumer } from '@trellis/runtime';
import { ChunkingService } from '../chunking.service';

/** `document.ingested` → ChunkingService, consumer group "chunking". */
export const documentEventsConsumer = topicConsumer({
  topic: 'document.ingested',
  group: 'chunking',
  service: ChunkingService,
  handle: (chunking, event) => chunking.onDocumentIngested(event),
  onFailure: (chunking, event, error) => chunking.onFailure(event, error),
});
