import { topicConsumer } from '@trellis/runtime';
import { ExtractionService } from '../extraction.service';

/** `chunk.ready` → ExtractionService, consumer group "extraction". */
export const chunkEventsConsumer = topicConsumer({
  topic: 'chunk.ready',
  group: 'extraction',
  service: ExtractionService,
  handle: (extraction, event) => extraction.onChunkReady(event),
  onFailure: (extraction, event, error) => extraction.onFailure(event, error),
});
