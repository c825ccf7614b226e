import { parentPort } from 'node:worker_threads';
import type { DocumentKind } from './mime-types';
import { extractText } from './text-extraction';
import type { ExtractionLimits } from './text-extraction';

/** One parse request, as the parse runner posts it. */
export interface ParseRequest {
  readonly kind: DocumentKind;
  readonly bytes: Uint8Array;
  readonly filename: string;
  readonly limits: ExtractionLimits;
}

export type ParseReply = { readonly text: string } | { readonly failure: string; readonly invalid: boolean };

// The worker parses one document and exits: the runner can stop it at any point.
parentPort?.once('message', (request: ParseRequest) => {
  extractText(request.kind, request.bytes, request.filename, request.limits).then(
    (text) => parentPort?.postMessage({ text } satisfies ParseReply),
    (error: Error) => parentPort?.postMessage({ failure: error.message, invalid: error.name === 'ParseFailure' } satisfies ParseReply),
  );
});
