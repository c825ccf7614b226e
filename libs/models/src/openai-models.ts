import OpenAI from 'openai';
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { ChatMessage, ChatModel, CompletionOptions } from './chat-model';
import type { EmbeddingProvider } from './embedding-provider';

export interface OpenAiClientSettings {
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
  readonly maxRetries?: number;
}

/**
 * One client per process. Each request is retried `maxRetries` times by the SDK on 408, 409,
 * 429, 5xx, connection errors and timeouts, waiting what Retry-After / retry-after-ms say
 * and otherwise backing off exponentially (0.5 s doubling to 8 s, with jitter). Only then does
 * the call fail, as UNAVAILABLE, and the event bus retries the whole event later.
 */
export function createOpenAiClient(settings: OpenAiClientSettings): OpenAI {
  return new OpenAI({
    baseURL: settings.baseUrl,
    // Local servers (Ollama, vLLM) accept any key; the SDK insists on one.
    apiKey: settings.apiKey ?? 'not-needed',
    timeout: settings.timeoutMs,
    maxRetries: settings.maxRetries ?? 3,
  });
}

/** What one provider call cost and how it went; never the text that was sent. */
export interface ModelCallRecord {
  readonly operation: 'chat' | 'chat_stream' | 'embeddings';
  /** The provider's model name, e.g. `gpt-4o-mini`. */
  readonly model: string;
  readonly durationSeconds: number;
  readonly outcome: 'ok' | 'error';
  /** Token usage as the provider reported it; absent when it reported none. */
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  /** Texts in an embedding request. */
  readonly batchSize?: number;
}

/** Receives every provider call, for metrics. Set once at boot with `observe`. */
export interface ModelCallObserver {
  record(call: ModelCallRecord): void;
}

export class OpenAiEmbedder implements EmbeddingProvider {
  readonly model: string;
  private observer: ModelCallObserver | undefined;

  constructor(
    private readonly client: OpenAI,
    private readonly modelName: string,
    readonly dimensions: number,
    private readonly batchSize = 64,
  ) {
    this.model = `openai:${modelName}`;
  }

  /** Reports each embedding request (one batch) to the observer. */
  observe(observer: ModelCallObserver): void {
    this.observer = observer;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize).map((t) => (t.trim() === '' ? ' ' : t));
      const response = await traced({ operation: 'embeddings', model: this.modelName, batchSize: batch.length }, this.observer, () =>
        this.client.embeddings.create({ model: this.modelName, input: batch, encoding_format: 'float' }),
        (r) => ({ inputTokens: r.usage?.prompt_tokens }),
      );
      const sorted = [...response.data].sort((a, b) => a.index - b.index);
      for (const item of sorted) {
        if (item.embedding.length !== this.dimensions) {
          throw new TrellisError(
            ErrorCode.FailedPrecondition,
            `embedding model ${this.modelName} returned ${item.embedding.length} dimensions, configured ${this.dimensions} (TRELLIS_EMBEDDING_DIMENSIONS)`,
          );
        }
        if (!item.embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
          throw new TrellisError(ErrorCode.Unavailable, `embedding model ${this.modelName} returned a vector that is not all numbers (input ${item.index})`);
        }
        out.push(Float32Array.from(item.embedding));
      }
    }
    return out;
  }
}

export class OpenAiChatModel implements ChatModel {
  private observer: ModelCallObserver | undefined;

  constructor(
    private readonly client: OpenAI,
    readonly model: string,
  ) {}

  /** Reports each completion (model, latency, reported tokens, outcome) to the observer. */
  observe(observer: ModelCallObserver): void {
    this.observer = observer;
  }

  async complete(messages: readonly ChatMessage[], options: CompletionOptions = {}): Promise<string> {
    const response = await traced({ operation: 'chat', model: this.model }, this.observer, () =>
      this.client.chat.completions.create(
        {
          model: this.model,
          messages: [...messages],
          temperature: options.temperature ?? 0,
          max_tokens: options.maxTokens,
          response_format: options.jsonSchema
            ? { type: 'json_schema', json_schema: { name: options.jsonSchema.name, schema: options.jsonSchema.schema, strict: false } }
            : options.jsonObject
              ? { type: 'json_object' }
              : undefined,
        },
        { signal: options.signal },
      ),
      (r) => ({ inputTokens: r.usage?.prompt_tokens, outputTokens: r.usage?.completion_tokens }),
    );
    if (response.usage) options.onUsage?.({ inputTokens: response.usage.prompt_tokens, outputTokens: response.usage.completion_tokens });
    return response.choices[0]?.message?.content ?? '';
  }

  async *stream(messages: readonly ChatMessage[], options: CompletionOptions = {}): AsyncIterable<string> {
    const call = startCall({ operation: 'chat_stream', model: this.model });
    let usage: OpenAI.CompletionUsage | undefined;
    let failure: unknown;
    try {
      const stream = await callProvider(() =>
        this.client.chat.completions.create(
          { model: this.model, messages: [...messages], temperature: options.temperature ?? 0.2, max_tokens: options.maxTokens, stream: true },
          { signal: options.signal },
        ),
      );
      for await (const part of stream) {
        // Servers that report usage on streams send it with the last part.
        if (part.usage) usage = part.usage;
        const delta = part.choices[0]?.delta?.content;
        if (delta) yield delta;
      }
    } catch (error) {
      failure = error;
      throw error;
    } finally {
      // Also when the caller stops reading early: the span must end either way.
      if (failure === undefined) {
        call.finish(this.observer, 'ok', { inputTokens: usage?.prompt_tokens, outputTokens: usage?.completion_tokens });
        if (usage) options.onUsage?.({ inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
      }
      else call.finish(this.observer, 'error', {}, failure);
    }
  }
}

type CallFacts = Pick<ModelCallRecord, 'operation' | 'model' | 'batchSize'>;
type Usage = Pick<ModelCallRecord, 'inputTokens' | 'outputTokens'>;

/**
 * A client span (GenAI semantic conventions: operation, model, token counts; no prompt or
 * text) and a clock around one provider call.
 */
function startCall(facts: CallFacts): { finish(observer: ModelCallObserver | undefined, outcome: 'ok' | 'error', usage: Usage, error?: unknown): void } {
  const started = performance.now();
  const span: Span = trace.getTracer('trellis').startSpan(`${facts.operation === 'embeddings' ? 'embeddings' : 'chat'} ${facts.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.system': 'openai',
      'gen_ai.operation.name': facts.operation === 'embeddings' ? 'embeddings' : 'chat',
      'gen_ai.request.model': facts.model,
      ...(facts.batchSize !== undefined ? { 'trellis.embedding.batch_size': facts.batchSize } : {}),
    },
  });
  return {
    finish(observer, outcome, usage, error) {
      if (usage.inputTokens !== undefined) span.setAttribute('gen_ai.usage.input_tokens', usage.inputTokens);
      if (usage.outputTokens !== undefined) span.setAttribute('gen_ai.usage.output_tokens', usage.outputTokens);
      if (error !== undefined) {
        const message = error instanceof Error ? error.message : String(error);
        span.recordException({ name: error instanceof Error ? error.name : 'Error', message });
        span.setStatus({ code: SpanStatusCode.ERROR, message });
      }
      span.end();
      observer?.record({ ...facts, ...usage, outcome, durationSeconds: (performance.now() - started) / 1000 });
    },
  };
}

/** One provider call with its span and observation. */
async function traced<T>(facts: CallFacts, observer: ModelCallObserver | undefined, call: () => Promise<T>, usageOf: (result: T) => Usage): Promise<T> {
  const handle = startCall(facts);
  try {
    const result = await callProvider(call);
    handle.finish(observer, 'ok', usageOf(result));
    return result;
  } catch (error) {
    handle.finish(observer, 'error', {}, error);
    throw error;
  }
}

/**
 * True when the provider refused the request itself (HTTP 400), e.g. a `response_format` it
 * does not support: retrying the same request cannot help, a different one may.
 */
export function isRejectedRequest(error: unknown): boolean {
  const cause = error instanceof TrellisError ? error.cause : error;
  return cause instanceof OpenAI.APIError && cause.status === 400;
}

/** Maps provider failures to domain errors: transient ones become UNAVAILABLE so events retry. */
async function callProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof OpenAI.APIError) {
      const status = error.status ?? 0;
      if (status === 429 || status >= 500 || status === 0) {
        throw new TrellisError(ErrorCode.Unavailable, `model provider unavailable (${status || 'connection'}): ${error.message}`, error);
      }
      throw new TrellisError(ErrorCode.FailedPrecondition, `model provider rejected the request (${status}): ${error.message}`, error);
    }
    if (error instanceof TrellisError) throw error;
    throw new TrellisError(ErrorCode.Unavailable, `model provider call failed: ${(error as Error).message}`, error);
  }
}
