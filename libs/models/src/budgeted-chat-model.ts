import { DEFAULT_CALL_PRIORITY } from './chat-model';
import type { CallPriority, ChatMessage, ChatModel, CompletionOptions, TokenUsage } from './chat-model';

/** Releases a granted call: charges what it really cost (tokens, when known) and frees its slot. */
export type CallRelease = (actualTokens: number | undefined) => Promise<void>;

/**
 * Admission for provider calls: a concurrency slot and rate budget per model, shared by
 * every process of a deployment (implemented over the shared store).
 */
export interface CallBudget {
  /** Waits until a call of about `estimatedTokens` may start; callers waiting in a process go by `priority`. */
  acquire(model: string, estimatedTokens: number, priority: CallPriority): Promise<CallRelease>;
}

/** A rough count for admission only: about four characters per token, as the providers bill. */
export function estimateTokens(messages: readonly ChatMessage[], maxTokens = 0): number {
  return Math.ceil(messages.reduce((sum, m) => sum + m.content.length, 0) / 4) + maxTokens;
}

/** A chat model whose every call first takes its share of a `CallBudget`. */
export class BudgetedChatModel implements ChatModel {
  constructor(
    private readonly inner: ChatModel,
    private readonly budget: CallBudget,
  ) {}

  get model(): string {
    return this.inner.model;
  }

  async complete(messages: readonly ChatMessage[], options: CompletionOptions = {}): Promise<string> {
    const release = await this.admit(messages, options);
    let used: TokenUsage | undefined;
    try {
      return await this.inner.complete(messages, { ...options, onUsage: (usage) => ((used = usage), options.onUsage?.(usage)) });
    } finally {
      await release(used && used.inputTokens + used.outputTokens);
    }
  }

  async *stream(messages: readonly ChatMessage[], options: CompletionOptions = {}): AsyncIterable<string> {
    const release = await this.admit(messages, options);
    let used: TokenUsage | undefined;
    try {
      yield* this.inner.stream(messages, { ...options, onUsage: (usage) => ((used = usage), options.onUsage?.(usage)) });
    } finally {
      await release(used && used.inputTokens + used.outputTokens);
    }
  }

  private admit(messages: readonly ChatMessage[], options: CompletionOptions): Promise<CallRelease> {
    return this.budget.acquire(this.model, estimateTokens(messages, options.maxTokens), options.priority ?? DEFAULT_CALL_PRIORITY);
  }
}
