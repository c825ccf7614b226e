import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { apiOf } from './api-caller';
import { streamDocumentEvents, streamKnowledgeBaseEvents } from './document-events';
import { EventStream } from './event-stream';
import { httpError } from './http-status';
import { multipartBoundary, parseMultipart } from './multipart-form';
import { sendJson } from './problem-response';
import { apiMethod, requestFromJson, responseToJson } from './proto-json';
import { HttpFailure, readBody } from './request-body';
import { requestJson } from './request-fields';
import type { RestRoute } from './rest-routes';

/** Room for multipart framing and the metadata part beside a file of the largest accepted size. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

export interface RestContext {
  /** The gRPC client acting as this request's caller. */
  readonly caller: TrellisClient;
  readonly maxUploadBytes: number;
  readonly progressPollMs: number;
}

/** Runs one REST operation: request JSON → gRPC request → one gRPC call (or stream) → JSON. */
export async function handleRestRoute(context: RestContext, route: RestRoute, params: Record<string, string>, req: IncomingMessage, res: ServerResponse, query: URLSearchParams): Promise<void> {
  const method = apiMethod(route.service, route.rpc);
  switch (route.kind) {
    case 'unary': {
      const request = requestFromJson(method.input, await requestJson(req, route, params, query, method.input));
      const response = await context.caller.invoke(apiOf(route.service), route.rpc, request);
      return sendJson(res, route.successStatus ?? 200, responseToJson(method.output, response));
    }
    case 'upload':
      return upload(context, params, req, res);
    case 'chat-stream': {
      const request = requestFromJson(method.input, await requestJson(req, route, params, query, method.input));
      return streamChat(context.caller.chat(request), res);
    }
    case 'site-stream': {
      const request = requestFromJson(method.input, await requestJson(req, route, params, query, method.input));
      return streamEvents(context.caller.addSite(request as Partial<v1.AddSiteRequest> & { knowledgeBase: string }), method.output, res, 1, () => 'page');
    }
    case 'document-events':
      return streamDocumentEvents(context, params['knowledgeBase']!, params['documentId']!, res);
    case 'knowledge-base-events':
      return streamKnowledgeBaseEvents(context, params['knowledgeBase']!, res);
  }
}

/**
 * `multipart/form-data` with a `file` part and an optional `metadata` part holding
 * UploadMetadata as JSON (filename, mimeType, sourceUri, metadata); the file part's own name
 * and type fill filename and mimeType when the metadata leaves them out. Sent to the same
 * streamed UploadDocument call the gRPC clients use, after the same size limit.
 */
async function upload(context: RestContext, params: Record<string, string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const boundary = multipartBoundary(req.headers['content-type']);
  const body = await readBody(req, context.maxUploadBytes + MULTIPART_OVERHEAD_BYTES, `the upload (a file of at most ${context.maxUploadBytes} bytes plus form framing)`);
  const parts = parseMultipart(body, boundary);
  const file = parts.find((p) => p.name === 'file');
  if (file === undefined) throw new HttpFailure(httpError(400, 'the form has no "file" part', { field: 'file' }));
  if (file.data.byteLength > context.maxUploadBytes) throw new HttpFailure(httpError(413, `the file is larger than ${context.maxUploadBytes} bytes`));
  const metadataPart = parts.find((p) => p.name === 'metadata');
  let metadata: Record<string, unknown> = {};
  if (metadataPart !== undefined) {
    try {
      metadata = JSON.parse(metadataPart.data.toString('utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new HttpFailure(httpError(400, `the metadata part is not valid JSON: ${(error as Error).message}`, { field: 'metadata' }));
    }
    if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) throw new HttpFailure(httpError(400, 'the metadata part must be a JSON object', { field: 'metadata' }));
  }
  const uploadMetadata = apiMethod('KnowledgeBaseService', 'UploadDocument').input.fields.find((f) => f.name === 'metadata')!.message!;
  const fileType = file.contentType !== undefined && file.contentType !== 'application/octet-stream' ? file.contentType : undefined;
  const request = requestFromJson(uploadMetadata, {
    ...(file.filename ? { filename: file.filename } : {}),
    ...(fileType ? { mimeType: fileType } : {}),
    ...(metadata as Record<string, never>),
    knowledgeBase: params['knowledgeBase']!,
  });
  const document = await context.caller.uploadDocument(request as Partial<v1.UploadMetadata>, file.data);
  sendJson(res, 201, responseToJson(apiMethod('KnowledgeBaseService', 'GetDocument').output, document));
}

/**
 * ChatEvents as server-sent events named for the event's case (`stage`, `token`, `citation`,
 * `done`), each event's data its proto3 JSON. The chat server announces its first stage before
 * it looks the knowledge base up, so the stream opens with the second event: a call refused
 * up to then (no key, a bad request, a missing knowledge base) is an ordinary HTTP error; a
 * failure later is an `error` event.
 */
export function streamChat(events: AsyncGenerator<v1.ChatEvent>, res: ServerResponse): Promise<void> {
  // An event is a oneof: its one member names it.
  return streamEvents(events, apiMethod('ChatService', 'Chat').output, res, 2, (json) => Object.keys(json)[0]);
}

/**
 * A server stream as server-sent events. The first `hold` events are awaited before the
 * response starts, so a call refused up to then is an ordinary HTTP error (problem+json); a
 * failure later is an `error` event. The stream is cancelled when the client goes away.
 */
async function streamEvents<T>(events: AsyncGenerator<T>, schema: Parameters<typeof responseToJson>[0], res: ServerResponse, hold: number, eventName: (json: Record<string, unknown>) => string | undefined): Promise<void> {
  const held: T[] = [];
  let next = await events.next();
  while (!next.done && held.length < hold - 1) {
    held.push(next.value);
    next = await events.next();
  }
  const stream = new EventStream(res);
  res.on('close', () => void events.return(undefined));
  const send = (event: T) => {
    const json = responseToJson(schema, event) as Record<string, unknown>;
    stream.send(eventName(json), JSON.stringify(json));
  };
  held.forEach(send);
  try {
    while (!next.done && !stream.closed) {
      send(next.value);
      next = await events.next();
    }
  } catch (error) {
    stream.fail(error);
  }
  stream.end();
}
