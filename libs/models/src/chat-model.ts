export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Who waits for a call. Callers of one process waiting for a slot of the same model go in this
 * order, each class first come, first served: `interactive` (a person waits: chat, questions;
 * the default), `follow-up` (work that finishes indexing already under way: gleaning, summaries,
 * merges; documents wait on it), `bulk` (new work: a chunk's first extraction call, community
 * reports). Processes share slots through the store, without an order between them.
 */
export type CallPriority = 'interactive' | 'follow-up' | 'bulk';

/** The priority of a call that names none: somebody is waiting for it. */
export const DEFAULT_CALL_PRIORITY: CallPriority = 'interactive';

export interface CompletionOptions {
  /** JSON schema for structured output; the reply is then a JSON document. */
  readonly jsonSchema?: { name: string; schema: Record<string, unknown> };
  /** JSON mode (`response_format: json_object`) for providers without structured output. */
  readonly jsonObject?: boolean;
  readonly temperature?: number;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
  /** Called with the token usage the provider reported for this call, when it reported any. */
  readonly onUsage?: (usage: TokenUsage) => void;
  /** Where the call queues for a concurrency slot (CallPriority); `interactive` when unset. */
  readonly priority?: CallPriority;
}

export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/** A language model behind an OpenAI-compatible API. */
export interface ChatModel {
  readonly model: string;
  complete(messages: readonly ChatMessage[], options?: CompletionOptions): Promise<string>;
  /** Yields the answer's text as it is generated. */
  stream(messages: readonly ChatMessage[], options?: CompletionOptions): AsyncIterable<string>;
}
