import type { ServerResponse } from 'node:http';
import type { JsonValue } from '@bufbuild/protobuf';
import type { v1 } from '@trellis/contracts';
import { EventStream } from './event-stream';
import { fromGrpcError } from './http-status';
import { apiMethod, responseToJson } from './proto-json';
import type { RestContext } from './rest-handler';

const TERMINAL = new Set(['INDEX_STATUS_GRAPHED', 'INDEX_STATUS_FAILED']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The next poll's answer. A poll the server sheds is not the end of the stream: it waits the
 * Retry-After (at least one poll interval) and asks again; any other error ends the stream.
 */
async function poll<T>(stream: EventStream, pollMs: number, call: () => Promise<T>): Promise<T | undefined> {
  for (;;) {
    await sleep(pollMs);
    if (stream.closed) return undefined;
    try {
      return await call();
    } catch (error) {
      const failure = fromGrpcError(error);
      if (failure.status !== 429) {
        stream.fail(error);
        return undefined;
      }
      await sleep(Math.max(0, (failure.retryAfterSeconds ?? 0) * 1000 - pollMs));
    }
  }
}

function documentJson(document: v1.Document): JsonValue {
  return responseToJson(apiMethod('KnowledgeBaseService', 'GetDocument').output, document);
}

/**
 * Indexing progress of one document. The gRPC API has no progress stream, so this polls
 * GetDocument every `progressPollMs` and sends a `document` event whenever the document
 * changed (status, stage, chunk counts, timings), ending once it is graphed or failed.
 */
export async function streamDocumentEvents(context: RestContext, knowledgeBase: string, documentId: string, res: ServerResponse): Promise<void> {
  let document = await context.caller.getDocument(knowledgeBase, documentId);
  const stream = new EventStream(res);
  let last = '';
  while (!stream.closed) {
    const json = JSON.stringify(documentJson(document));
    if (json !== last) stream.send('document', json);
    last = json;
    if (TERMINAL.has(document.status as string)) break;
    const next = await poll(stream, context.progressPollMs, () => context.caller.getDocument(knowledgeBase, documentId));
    if (next === undefined) break;
    document = next;
  }
  stream.end();
}

/**
 * Indexing progress of a whole knowledge base, polled with ListDocuments: a `document` event
 * per new or changed document and a `deleted` event (`{"id": ...}`) per vanished one, until
 * the client leaves.
 */
export async function streamKnowledgeBaseEvents(context: RestContext, knowledgeBase: string, res: ServerResponse): Promise<void> {
  let documents = (await context.caller.listDocuments(knowledgeBase)).documents;
  const stream = new EventStream(res);
  const seen = new Map<string, string>();
  while (!stream.closed) {
    const current = new Set<string>();
    for (const document of documents) {
      current.add(document.id);
      const json = JSON.stringify(documentJson(document));
      if (seen.get(document.id) !== json) stream.send('document', json);
      seen.set(document.id, json);
    }
    for (const id of [...seen.keys()].filter((id) => !current.has(id))) {
      seen.delete(id);
      stream.send('deleted', JSON.stringify({ id }));
    }
    const next = await poll(stream, context.progressPollMs, () => context.caller.listDocuments(knowledgeBase));
    if (next === undefined) break;
    documents = next.documents;
  }
  stream.end();
}
