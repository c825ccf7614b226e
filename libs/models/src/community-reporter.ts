import type { ChatModel, TokenUsage } from './chat-model';
import { truncateAtWord } from './description-summarizer';

const TITLE_CHARS = 120;
const SUMMARY_CHARS = 1200;

const REPORT_SCHEMA = {
  name: 'community_report',
  schema: {
    type: 'object',
    additionalProperties: false,
    required: ['title', 'summary'],
    properties: { title: { type: 'string' }, summary: { type: 'string' } },
  },
};

/**
 * Writes the title and summary of one community of the knowledge graph from a brief of its
 * central entities and relationships (structured output; the key facts stay extractive, so
 * every one of them cites its relationship and chunks).
 */
export class LlmCommunityReporter {
  constructor(private readonly llm: ChatModel) {}

  /** `onUsage` receives the tokens the call cost, as the provider reported them. */
  async write(brief: string, onUsage?: (usage: TokenUsage) => void): Promise<{ title: string; summary: string }> {
    const reply = await this.llm.complete(
      [
        {
          role: 'system',
          content:
            'You write a report on one community of a knowledge graph: a group of closely related entities. ' +
            `Give it a specific title of at most ${TITLE_CHARS} characters naming what holds the group together, and a factual summary of at most ${SUMMARY_CHARS} characters ` +
            'covering its main entities, how they relate and why the group matters. Use only what the brief says. Reply as JSON {"title": ..., "summary": ...}.',
        },
        { role: 'user', content: brief },
      ],
      // Reports are background work, in line with new extraction.
      { jsonSchema: REPORT_SCHEMA, temperature: 0, maxTokens: Math.ceil((TITLE_CHARS + SUMMARY_CHARS) / 3), onUsage, priority: 'bulk' },
    );
    const parsed = JSON.parse(reply) as { title?: unknown; summary?: unknown };
    if (typeof parsed.title !== 'string' || typeof parsed.summary !== 'string') throw new Error('community report reply lacks a string title and summary');
    return { title: truncateAtWord(parsed.title.trim(), TITLE_CHARS), summary: truncateAtWord(parsed.summary.trim(), SUMMARY_CHARS) };
  }
}
