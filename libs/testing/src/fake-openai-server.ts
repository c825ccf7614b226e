import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake answers to one chat-completions request. */
export type ScriptedReply =
  | { kind: 'content'; content: string; delayMs?: number }
  | { kind: 'status'; status: number; retryAfterSeconds?: number; body?: string }
  | { kind: 'hang'; ms: number };

export interface RecordedRequest {
  path: string;
  body: Record<string, unknown>;
}

type ChatResponder = (request: Record<string, unknown>) => ScriptedReply;

/**
 * An OpenAI-compatible HTTP server for tests: `/v1/chat/completions` (plain and streamed)
 * answers from a script or a responder function, `/v1/embeddings` returns deterministic
 * vectors. Every request is recorded so tests can count calls and tokens.
 */
export class FakeOpenAiServer {
  readonly requests: RecordedRequest[] = [];
  /** Most chat requests ever being answered at the same time (to check concurrency limits). */
  maxChatInFlight = 0;
  /** The same per model: concurrency limits are per model, and summaries use another model than extraction. */
  readonly maxChatInFlightByModel = new Map<string, number>();
  private chatInFlight = 0;
  private readonly chatInFlightByModel = new Map<string, number>();
  /** When set, /embeddings answers vectors whose values are null: a broken model or proxy. */
  garbledEmbeddings = false;
  /** An embedding input longer than this is refused with 400, as a model refuses text beyond its context. */
  maxEmbeddingInputChars = Number.POSITIVE_INFINITY;
  private server: Server | undefined;
  private script: ScriptedReply[] = [];
  private responder: ChatResponder = () => ({ kind: 'content', content: 'ok' });

  constructor(private readonly embeddingDimensions = 64) {}

  /** Replies used once each, in order, before the responder. */
  enqueue(...replies: ScriptedReply[]): void {
    this.script.push(...replies);
  }

  respondWith(responder: ChatResponder): void {
    this.responder = responder;
  }

  chatRequests(): RecordedRequest[] {
    return this.requests.filter((r) => r.path.endsWith('/chat/completions'));
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    } catch {
      return this.json(res, 400, { error: { message: 'invalid JSON body' } });
    }
    const path = req.url ?? '';
    this.requests.push({ path, body });
    if (path.endsWith('/embeddings')) return this.embeddings(res, body);
    if (path.endsWith('/chat/completions')) {
      const model = String(body.model);
      const inFlight = (this.chatInFlightByModel.get(model) ?? 0) + 1;
      this.chatInFlightByModel.set(model, inFlight);
      this.maxChatInFlightByModel.set(model, Math.max(this.maxChatInFlightByModel.get(model) ?? 0, inFlight));
      this.maxChatInFlight = Math.max(this.maxChatInFlight, ++this.chatInFlight);
      // A call is in flight until it is answered or its client gives up (a timed-out request
      // the fake still holds is not in flight for the client any more).
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        this.chatInFlight--;
        this.chatInFlightByModel.set(model, this.chatInFlightByModel.get(model)! - 1);
      };
      res.once('close', end);
      try {
        return await this.chat(res, body);
      } finally {
        end();
      }
    }
    if (path.endsWith('/rerank')) return this.rerank(res, body);
    this.json(res, 404, { error: { message: `no route ${path}` } });
  }

  private embeddings(res: ServerResponse, body: Record<string, unknown>): void {
    const input = Array.isArray(body.input) ? (body.input as string[]) : [String(body.input)];
    const tooLong = input.findIndex((text) => text.length > this.maxEmbeddingInputChars);
    if (tooLong >= 0) return this.json(res, 400, { error: { message: `input[${tooLong}] is longer than the model's maximum context length`, type: 'invalid_request_error' } });
    const data = input.map((text, index) => ({ object: 'embedding', index, embedding: this.garbledEmbeddings ? new Array(this.embeddingDimensions).fill(null) : fakeEmbedding(text, this.embeddingDimensions) }));
    const tokens = input.reduce((sum, t) => sum + Math.ceil(t.length / 4), 0);
    this.json(res, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
  }

  /** Cohere-style `/rerank`: scores each document by how often it contains the query's last word. */
  private rerank(res: ServerResponse, body: Record<string, unknown>): void {
    const documents = Array.isArray(body.documents) ? (body.documents as string[]) : [];
    const word = String(body.query ?? '').toLowerCase().match(/[a-z0-9]+/g)?.pop() ?? '';
    const results = documents.map((text, index) => ({ index, relevance_score: word === '' ? 0 : text.toLowerCase().split(word).length - 1 }));
    this.json(res, 200, { results: results.sort((a, b) => b.relevance_score - a.relevance_score) });
  }

  private async chat(res: ServerResponse, body: Record<string, unknown>): Promise<void> {
    const reply = this.script.shift() ?? this.responder(body);
    if (reply.kind === 'hang') {
      await new Promise((r) => setTimeout(r, reply.ms));
      if (!res.writableEnded && !res.destroyed) this.json(res, 200, completion('late', body));
      return;
    }
    if (reply.kind === 'status') {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (reply.retryAfterSeconds !== undefined) headers['retry-after'] = String(reply.retryAfterSeconds);
      res.writeHead(reply.status, headers);
      res.end(reply.body ?? JSON.stringify({ error: { message: `scripted ${reply.status}`, type: 'scripted' } }));
      return;
    }
    if (reply.delayMs !== undefined) await new Promise((r) => setTimeout(r, reply.delayMs));
    if (body.stream === true) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const piece of reply.content.match(/\S+\s*/g) ?? []) {
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })}\n\n`);
      }
      res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: body.model, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
      res.end('data: [DONE]\n\n');
      return;
    }
    this.json(res, 200, completion(reply.content, body));
  }

  private json(res: ServerResponse, status: number, payload: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(payload));
  }
}

function completion(content: string, body: Record<string, unknown>) {
  const promptTokens = JSON.stringify(body.messages ?? '').length / 4;
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: Math.ceil(promptTokens), completion_tokens: Math.ceil(content.length / 4), total_tokens: Math.ceil(promptTokens + content.length / 4) },
  };
}

/** Deterministic unit vector from the words of a text (shared words → similar vectors). */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash('md5').update(word).digest();
    vector[h.readUInt32LE(0) % dimensions]! += 1;
  }
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0)) || 1;
  return vector.map((v) => v / norm);
}

/**
 * The environment that points a Trellis process at a FakeOpenAiServer for chat and
 * embeddings; `extra` adds or overrides settings.
 */
export function fakeProviderEnv(baseUrl: string, dimensions: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    OPENAI_BASE_URL: baseUrl,
    OPENAI_API_KEY: 'test-key',
    TRELLIS_LLM_MODEL: 'fake-model',
    TRELLIS_EMBEDDINGS: 'openai',
    TRELLIS_EMBEDDING_MODEL: 'fake-embed',
    TRELLIS_EMBEDDING_DIMENSIONS: String(dimensions),
    ...extra,
  };
}
