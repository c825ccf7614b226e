import OpenAI from 'openai';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import type { ChatMessage, ChatModel, CompletionOptions } from './chat-model';
import type { EmbeddingProvider } from './embedding-provider';

export interface OpenAiClientSettings {
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly timeoutMs: number;
  readonly maxRetries?: number;
}

/** One client per process; the SDK retries 429/5xx with backoff and honours Retry-After. */
export function createOpenAiClient(settings: OpenAiClientSettings): OpenAI {
  return new OpenAI({
    baseURL: settings.baseUrl,
    // Local servers (Ollama, vLLM) accept any key; the SDK insists on one.
    apiKey: settings.apiKey ?? 'not-needed',
    timeout: settings.timeoutMs,
    maxRetries: settings.maxRetries ?? 3,
  });
}

export class OpenAiEmbedder implements EmbeddingProvider {
  readonly model: string;

  constructor(
    private readonly client: OpenAI,
    private readonly modelName: string,
    readonly dimensions: number,
    private readonly batchSize = 64,
  ) {
    this.model = `openai:${modelName}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize).map((t) => (t.trim() === '' ? ' ' : t));
      const response = await callProvider(() =>
        this.client.embeddings.create({ model: this.modelName, input: batch, encoding_format: 'float' }),
      );
      const sorted = [...response.data].sort((a, b) => a.index - b.index);
      for (const item of sorted) {
        if (item.embedding.length !== this.dimensions) {
          throw new TrellisError(
            ErrorCode.FailedPrecondition,
            `embedding model ${this.modelName} returned ${item.embedding.length} dimensions, configured ${this.dimensions} (TRELLIS_EMBEDDING_DIMENSIONS)`,
          );
        }
        out.push(Float32Array.from(item.embedding));
      }
    }
    return out;
  }
}

export class OpenAiChatModel implements ChatModel {
  constructor(
    private readonly client: OpenAI,
    readonly model: string,
  ) {}

  async complete(messages: readonly ChatMessage[], options: CompletionOptions = {}): Promise<string> {
    const response = await callProvider(() =>
      this.client.chat.completions.create(
        {
          model: this.model,
          messages: [...messages],
          temperature: options.temperature ?? 0,
          max_tokens: options.maxTokens,
          response_format: options.jsonSchema
            ? { type: 'json_schema', json_schema: { name: options.jsonSchema.name, schema: options.jsonSchema.schema, strict: false } }
            : undefined,
        },
        { signal: options.signal },
      ),
    );
    return response.choices[0]?.message?.content ?? '';
  }

  async *stream(messages: readonly ChatMessage[], options: CompletionOptions = {}): AsyncIterable<string> {
    const stream = await callProvider(() =>
      this.client.chat.completions.create(
        { model: this.model, messages: [...messages], temperature: options.temperature ?? 0.2, max_tokens: options.maxTokens, stream: true },
        { signal: options.signal },
      ),
    );
    for await (const part of stream) {
      const delta = part.choices[0]?.delta?.content;
      if (delta) yield delta;
    }
  }
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
