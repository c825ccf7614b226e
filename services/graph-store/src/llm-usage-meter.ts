import type { TokenUsage } from '@trellis/models';
import type { LlmUsage } from '@trellis/storage';

/** Adds up the LLM calls one piece of graph work made (summaries, merge decisions). */
export class LlmUsageMeter {
  private calls = 0;
  private inputTokens = 0;
  private outputTokens = 0;

  /** Pass as `onUsage` to every call that should count. */
  readonly record = (usage: TokenUsage): void => {
    this.calls += 1;
    this.inputTokens += usage.inputTokens;
    this.outputTokens += usage.outputTokens;
  };

  get empty(): boolean {
    return this.calls === 0;
  }

  total(costOf: (usage: TokenUsage) => number): LlmUsage {
    const tokens = { inputTokens: this.inputTokens, outputTokens: this.outputTokens };
    return { calls: this.calls, ...tokens, estimatedCostUsd: costOf(tokens), cacheHits: 0 };
  }
}
