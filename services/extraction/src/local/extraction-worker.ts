import { parentPort } from 'node:worker_threads';
import type { ThreadReply, ThreadRequest } from '@trellis/models';
import { LocalExtractor } from './local-extractor';

/** A chunk to extract; its answer is the result, or the error's message. */
export interface ExtractionRequest {
  readonly text: string;
}
type ExtractionReply = ThreadReply<Awaited<ReturnType<LocalExtractor['extract']>>>;

// The local extractor's thread: tagging a chunk with compromise takes milliseconds of CPU that
// would otherwise hold the server's event loop.
const extractor = new LocalExtractor();
parentPort?.on('message', (request: ThreadRequest<ExtractionRequest>) => {
  extractor.extract(request.text).then(
    (result) => parentPort?.postMessage({ id: request.id, result } satisfies ExtractionReply),
    (error: unknown) => parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies ExtractionReply),
  );
});
