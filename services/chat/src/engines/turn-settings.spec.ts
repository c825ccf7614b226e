import { describe, expect, it } from 'vitest';
import type { v1 } from '@trellis/contracts';
import type { ChatEngineSettings } from '@trellis/storage';
import { turnSettings } from './turn-settings';

const REQUEST: v1.ChatRequest = { knowledgeBase: '', question: 'q', history: [], topK: 0, chatId: '', scope: '', engine: '' };
const ENGINE: ChatEngineSettings & { name: string } = {
  name: 'docs',
  knowledgeBases: ['nest', 'nest-old'],
  mode: 'vector',
  topK: 2,
  depth: 3,
  strategy: 'weighted',
  scope: 'auto',
  systemPrompt: 'S',
  refinePrompt: 'R',
  condensePrompt: 'C',
  answerPrompt: 'A',
  showGraphContext: true,
  noRerank: true,
};

describe('turnSettings', () => {
  it('takes the server defaults without an engine', () => {
    expect(turnSettings({ ...REQUEST, knowledgeBase: 'kb' }, null)).toEqual({
      knowledgeBase: 'kb',
      topK: 5,
      mode: 'hybrid',
      depth: 0,
      strategy: '',
      scope: '',
      prompts: { system: '', refine: '', condense: '', answer: '' },
      showGraphContext: false,
      rerank: true,
      engine: '',
    });
  });

  it("fills what the request leaves out from the engine, the engine's first knowledge base included", () => {
    expect(turnSettings(REQUEST, ENGINE)).toEqual({
      knowledgeBase: 'nest',
      topK: 2,
      mode: 'vector',
      depth: 3,
      strategy: 'weighted',
      scope: 'auto',
      prompts: { system: 'S', refine: 'R', condense: 'C', answer: 'A' },
      showGraphContext: true,
      rerank: false,
      engine: 'docs',
    });
  });

  it('lets the request win: its knowledge base (one of the engine\'s), top_k and scope; a continued chat\'s knowledge base before the engine\'s', () => {
    expect(turnSettings({ ...REQUEST, knowledgeBase: 'nest-old', topK: 7, scope: 'local' }, ENGINE)).toMatchObject({ knowledgeBase: 'nest-old', topK: 7, scope: 'local', mode: 'vector' });
    expect(turnSettings(REQUEST, ENGINE, 'kb_of_the_chat').knowledgeBase).toBe('kb_of_the_chat');
  });

  it('refuses a knowledge base outside the engine\'s list, and a turn with no knowledge base at all', () => {
    expect(() => turnSettings({ ...REQUEST, knowledgeBase: 'other' }, ENGINE)).toThrow(/knowledge base "other" is not one of chat engine "docs"'s \(nest, nest-old\)/);
    expect(() => turnSettings(REQUEST, null)).toThrow(/knowledge_base is empty/);
    expect(turnSettings({ ...REQUEST, knowledgeBase: 'any' }, { ...ENGINE, knowledgeBases: [] }).knowledgeBase).toBe('any');
  });
});
