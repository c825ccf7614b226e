import type { ChatModel, TokenUsage } from './chat-model';
import type { Models } from './models';

/**
 * Condenses the descriptions an entity or relationship collected from many chunks into one
 * summary, when their concatenation outgrew the knowledge base's limit.
 */
export class LlmDescriptionSummarizer {
  /** LLM calls made, for tests and logs. */
  calls = 0;

  constructor(private readonly llm: ChatModel) {}

  async summarize(heading: string, descriptions: readonly string[], maxChars: number, onUsage?: (usage: TokenUsage) => void): Promise<string> {
    this.calls++;
    const reply = await this.llm.complete(
      [
        {
          role: 'system',
          content:
            `You merge descriptions of one knowledge-graph item into a single factual summary of at most ${maxChars} characters. ` +
            'Keep every distinct fact that fits, resolve repetitions, add nothing that the descriptions do not say. Reply with the summary only.',
        },
        { role: 'user', content: `Item: ${heading}\nDescriptions:\n${descriptions.map((d) => `- ${d}`).join('\n')}` },
      ],
      // Graph writes wait for their summaries.
      { temperature: 0, maxTokens: Math.ceil(maxChars / 3), onUsage, priority: 'follow-up' },
    );
    return truncateAtWord(reply.trim(), maxChars);
  }
}

/** At most `maxChars`, cut at a word boundary when there is one in the last fifth. */
export function truncateAtWord(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, maxChars);
  const space = cut.lastIndexOf(' ');
  return (space > maxChars * 0.8 ? cut.slice(0, space) : cut).trimEnd();
}

/**
 * The embedder and, with an LLM, the summarizer, in the shape storage's SummaryRefresher takes:
 * what every process that changes the graph (graph writes, document deletes) uses to keep
 * summaries and embeddings current.
 */
export function summaryModelsOf(models: Models): {
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  summarize: ((heading: string, descriptions: readonly string[], maxChars: number, onUsage?: (usage: TokenUsage) => void) => Promise<string>) | null;
} {
  const summarizer = models.llm === null ? null : new LlmDescriptionSummarizer(models.llm);
  return {
    embed: (texts) => models.embedder.embed(texts),
    summarize: summarizer && ((heading, descriptions, maxChars, onUsage) => summarizer.summarize(heading, descriptions, maxChars, onUsage)),
  };
}
