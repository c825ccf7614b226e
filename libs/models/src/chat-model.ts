export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface CompletionOptions {
  /** JSON schema for structured output; the reply is then a JSON document. */
  readonly jsonSchema?: { name: string; schema: Record<string, unknown> };
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

/** A language model behind an OpenAI-compatible API. */
export interface ChatModel {
  readonly model: string;
  complete(messages: readonly ChatMessage[], options?: CompletionOptions): Promise<string>;
  /** Yields the answer's text as it is generated. */
  stream(messages: readonly ChatMessage[], options?: CompletionOptions): AsyncIterable<string>;
}
