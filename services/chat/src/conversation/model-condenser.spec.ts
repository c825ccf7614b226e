import { describe, expect, it } from 'vitest';
import type { v1 } from '@trellis/contracts';
import type { ChatMessage, ChatModel, CompletionOptions } from '@trellis/models';
import { CONDENSE_PROMPT, ModelQuestionCondenser } from './model-condenser';
import { RuleQuestionCondenser } from './rule-condenser';
import { boundHistory } from './history-bounds';

/** A language model that replies as told, recording what it was sent. */
class ScriptedModel implements ChatModel {
  readonly model = 'scripted';
  readonly calls: Array<{ messages: readonly ChatMessage[]; options: CompletionOptions }> = [];
  constructor(private readonly reply: (signal: AbortSignal | undefined) => Promise<string>) {}
  complete(messages: readonly ChatMessage[], options: CompletionOptions = {}): Promise<string> {
    this.calls.push({ messages, options });
    return this.reply(options.signal);
  }
  async *stream(): AsyncIterable<string> {
    throw new Error('not used');
  }
}

const HISTORY: v1.ChatMessage[] = [
  { role: 'user', content: 'What is the capital of France?' },
  { role: 'assistant', content: 'The capital of France is Paris [1].' },
];

describe('ModelQuestionCondenser', () => {
  it("uses the model's one-line rewrite, sending the conversation and the follow-up with the prompt", async () => {
    const llm = new ScriptedModel(async () => '"What is the population of Paris?"');
    const condensed = await new ModelQuestionCondenser(llm, new RuleQuestionCondenser(), 1000).condense('and its population?', HISTORY);
    expect(condensed).toEqual({ question: 'What is the population of Paris?', method: 'model' });
    expect(llm.calls[0]!.messages[0]).toEqual({ role: 'system', content: CONDENSE_PROMPT });
    expect(llm.calls[0]!.messages[1]!.content).toBe('Conversation:\nuser: What is the capital of France?\nassistant: The capital of France is Paris [1].\n\nFollow-up question: and its population?');
    expect(llm.calls[0]!.options).toMatchObject({ temperature: 0, maxTokens: 200 });
    await new ModelQuestionCondenser(llm, new RuleQuestionCondenser(), 1000).condense('and its population?', HISTORY, 'Rewrite tersely.');
    expect(llm.calls[1]!.messages[0]!.content).toBe('Rewrite tersely.');
  });

  it('falls back to the deterministic rewrite on garbage, on a failed call and on a timeout, saying why', async () => {
    const cases: Array<[() => Promise<string>, RegExp]> = [
      [async () => '', /nothing/],
      [async () => 'Sure!\nHere is the question:\nWhat is it?', /several lines/],
      [async () => '{"question": "x"}', /markup/],
      [async () => 'lorem ipsum dolor sit amet '.repeat(60), /at length/],
      [async () => 'Zebra quokka xylophone', /no word/],
      [async () => Promise.reject(new Error('500 from provider')), /call failed/],
    ];
    for (const [reply, reason] of cases) {
      const condensed = await new ModelQuestionCondenser(new ScriptedModel(reply), new RuleQuestionCondenser(), 1000).condense('and its population?', HISTORY);
      expect(condensed).toEqual({ question: 'and its population? (France)', method: 'rules', fallbackReason: expect.stringMatching(reason) });
    }
    const slow = new ScriptedModel(
      (signal) => new Promise((_, reject) => signal!.addEventListener('abort', () => reject(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' })))),
    );
    const condensed = await new ModelQuestionCondenser(slow, new RuleQuestionCondenser(), 50).condense('and its population?', HISTORY);
    expect(condensed).toEqual({ question: 'and its population? (France)', method: 'rules', fallbackReason: 'no reply within 50 ms' });
  });

  it('calls no model without an earlier question', async () => {
    const llm = new ScriptedModel(async () => 'x');
    expect(await new ModelQuestionCondenser(llm, new RuleQuestionCondenser(), 1000).condense('What is Paris?', [])).toEqual({ question: 'What is Paris?', method: 'unchanged' });
    expect(llm.calls).toHaveLength(0);
  });
});

describe('boundHistory', () => {
  const messages = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${i}`.repeat(10) }));

  it('keeps the most recent turns that fit, oldest first', () => {
    expect(boundHistory(messages, { turns: 2, chars: 1000 }).map((m) => m.content[0])).toEqual(['6', '7', '8', '9']);
    expect(boundHistory(messages, { turns: 5, chars: 35 }).map((m) => m.content[0])).toEqual(['7', '8', '9']);
    expect(boundHistory(messages, { turns: 0, chars: 1000 })).toEqual([]);
  });

  it('cuts the newest message alone to the character bound', () => {
    expect(boundHistory([{ role: 'user', content: 'x'.repeat(50) }], { turns: 6, chars: 20 })).toEqual([{ role: 'user', content: 'x'.repeat(20) }]);
  });
});
