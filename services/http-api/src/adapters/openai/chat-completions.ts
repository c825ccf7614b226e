import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { httpError } from '../http-status';
import { apiMethod, responseToJson } from '../proto-json';
import { HttpFailure } from '../request-body';
import { openAiErrorBody } from './openai-errors';
import { fromGrpcError } from '../http-status';

interface OpenAiMessage {
  readonly role: string;
  readonly content: string;
}

/** The parts of an OpenAI chat completion request Trellis uses; other fields (temperature, ...) are accepted and ignored. */
export interface CompletionRequest {
  readonly model: string;
  readonly messages: readonly OpenAiMessage[];
  readonly stream: boolean;
}

const invalid = (message: string, field: string) => new HttpFailure(httpError(400, message, { field }));

/** Text of a message's content: a string, or the text parts of a content-part array. */
function contentText(content: unknown, index: number): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content.map((part: { type?: unknown; text?: unknown }) => (part?.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
  }
  throw invalid(`messages[${index}].content must be a string or an array of content parts`, `messages[${index}].content`);
}

/** Checks the OpenAI request's own shape; what the question and history may hold is the chat server's to check. */
export function parseCompletionRequest(body: unknown): CompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object', 'body');
  const { model, messages, stream } = body as Record<string, unknown>;
  if (typeof model !== 'string' || model === '') throw invalid('model must name a knowledge base', 'model');
  if (!Array.isArray(messages) || messages.length === 0) throw invalid('messages must be a non-empty array', 'messages');
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean') throw invalid('stream must be a boolean', 'stream');
  const parsed = messages.map((m: unknown, i): OpenAiMessage => {
    if (typeof m !== 'object' || m === null || typeof (m as { role?: unknown }).role !== 'string') throw invalid(`messages[${i}].role must be a string`, `messages[${i}].role`);
    return { role: (m as { role: string }).role, content: contentText((m as { content?: unknown }).content, i) };
  });
  return { model, messages: parsed, stream: stream === true };
}

/**
 * The ChatRequest of a completion: the last user message is the question; the user and
 * assistant turns before it are the history. System (and developer/tool) messages are
 * dropped: Trellis's answer prompt is the server's own, and the chat API refuses a client's.
 */
export function chatRequestOf(request: CompletionRequest): Partial<v1.ChatRequest> {
  const last = request.messages.map((m) => m.role).lastIndexOf('user');
  if (last < 0) throw invalid('messages must include a user message: its content is the question', 'messages');
  const history = request.messages.slice(0, last).filter((m) => m.role === 'user' || m.role === 'assistant');
  return { knowledgeBase: request.model, question: request.messages[last]!.content, history: history.map((m) => ({ role: m.role, content: m.content })) };
}

function citationsJson(citations: readonly v1.Citation[]): unknown[] {
  const schema = apiMethod('ChatService', 'Ask').output.fields.find((f) => f.name === 'citations')!.message!;
  return citations.map((c) => responseToJson(schema, c));
}

const now = () => Math.floor(Date.now() / 1000);

/**
 * A completion in one response. The answer text keeps its `[n]` markers; `message.citations`
 * (an extension) lists what each n refers to: index, documentId, chunkId, sourceUri, snippet.
 */
export async function completion(caller: TrellisClient, request: CompletionRequest, res: ServerResponse): Promise<void> {
  const answer = await caller.ask(chatRequestOf(request));
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(
    JSON.stringify({
      id: `chatcmpl-${answer.chatId || randomUUID()}`,
      object: 'chat.completion',
      created: now(),
      model: request.model,
      choices: [{ index: 0, message: { role: 'assistant', content: answer.text, refusal: null, citations: citationsJson(answer.citations) }, logprobs: null, finish_reason: 'stop' }],
    }),
  );
}

/**
 * A streamed completion: `chat.completion.chunk` events, one per answer token, the last one
 * with `finish_reason: "stop"` and `delta.citations`, then `data: [DONE]`. A failure before
 * the first token is an ordinary HTTP error; after it, a `data: {"error": ...}` event before
 * `[DONE]`.
 */
export async function streamedCompletion(caller: TrellisClient, request: CompletionRequest, res: ServerResponse): Promise<void> {
  const events = caller.chat(chatRequestOf(request));
  let next = await events.next();
  // Stages are not part of OpenAI's format; waiting past them turns an early refusal into an HTTP error.
  while (!next.done && next.value.stage) next = await events.next();
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  res.on('close', () => void events.return(undefined));
  const id = `chatcmpl-${randomUUID()}`;
  const created = now();
  const chunk = (delta: Record<string, unknown>, finishReason: string | null) =>
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] })}\n\n`);
  chunk({ role: 'assistant', content: '' }, null);
  try {
    while (!next.done && !res.destroyed) {
      const event = next.value;
      if (event.token !== undefined && event.token !== null && event.token !== '') chunk({ content: event.token }, null);
      if (event.done) chunk({ citations: citationsJson(event.done.citations) }, 'stop');
      next = await events.next();
    }
  } catch (error) {
    res.write(`data: ${JSON.stringify(openAiErrorBody(fromGrpcError(error)))}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}
