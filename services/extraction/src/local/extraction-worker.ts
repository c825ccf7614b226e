import { parentPort } from 'node:worker_threads';
import { LocalExtractor } from './local-extractor';

/** A chunk to extract, and its answer: the result, or the error's message. */
export interface ExtractionRequest {
  readonly id: number;
  readonly text: string;
}
export type ExtractionReply = { readonly id: number; readonly result: Awaited<ReturnType<LocalExtractor['extract']>> } | { readonly id: number; readonly error: string };

// The local extractor's thread: tagging a chunk with compromise takes milliseconds of CPU that
// would otherwise hold the server's event loop.
const extractor = new LocalExtractor();
parentPort?.on('message', (request: ExtractionRequest) => {
  extractor.extract(request.text).then(
    (result) => parentPort?.postMessage({ id: request.id, result } satisfies ExtractionReply),
    (error: unknown) => parentPort?.postMessage({ id: request.id, error: error instanceof Error ? error.message : String(error) } satisfies ExtractionReply),
  );
});
