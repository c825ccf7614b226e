import { topicConsumer } from '@trellis/runtime';
import { GraphWriterService } from '../graph-writer.service';

/** `chunk.extracted` → GraphWriterService, consumer group "graph-store". */
export const extractionEventsConsumer = topicConsumer({
  topic: 'chunk.extracted',
  group: 'graph-store',
  service: GraphWriterService,
  handle: (writer, event) => writer.onChunkExtracted(event),
  onFailure: (writer, event, error) => writer.onFailure(event, error),
});
