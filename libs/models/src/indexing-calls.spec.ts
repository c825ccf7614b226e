import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatModel, CompletionOptions } from './chat-model';
import { LlmCommunityReporter } from './community-reporter';
import { LlmDescriptionSummarizer } from './description-summarizer';

/** A chat model that answers `reply` and keeps the options of every call. */
function recordingModel(reply: string): ChatModel & { options: CompletionOptions[] } {
  const options: CompletionOptions[] = [];
  return {
    model: 'm',
    options,
    complete: async (_messages: readonly ChatMessage[], o: CompletionOptions = {}) => (options.push(o), reply),
    stream: async function* () {},
  };
}

describe("the indexing pipeline's own LLM calls", () => {
  it('summarizes as a follow-up (graph writes wait for it), cut at a word within the limit', async () => {
    const model = recordingModel('Ada Lovelace wrote the first published algorithm for the Analytical Engine.');
    const summary = await new LlmDescriptionSummarizer(model).summarize('Ada Lovelace', ['Mathematician.', 'Wrote notes.'], 40);
    expect(summary).toBe('Ada Lovelace wrote the first published');
    expect(model.options[0]).toMatchObject({ priority: 'follow-up', maxTokens: 14 });
  });

  it('writes community reports as background work, in line with new extraction', async () => {
    const model = recordingModel(JSON.stringify({ title: 'Engines', summary: 'Babbage and Lovelace.' }));
    expect(await new LlmCommunityReporter(model).write('brief')).toEqual({ title: 'Engines', summary: 'Babbage and Lovelace.' });
    expect(model.options[0]?.priority).toBe('bulk');
  });
});
