import { describe, expect, it } from 'vitest';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatRepository, ChatTurn } from '@trellis/storage';
import type { AnswerComposer } from './answer-composer';
import { ChatEngine } from './chat-engine';
import type { RetrievalPort } from './retrieval-port';

const HIT: v1.ChunkHit = {
  chunkId: 'c1',
  documentId: 'd1',
  sourceUri: 'curie.txt',
  ordinal: 0,
  text: 'Marie Curie directed the Radium Institute.',
  score: 1,
  signals: [],
  documentMetadata: {},
  knowledgeBaseId: 'kb-1',
};

/** Retrieval as chat sees it, counting the calls of each turn. */
class CountingRetrieval implements RetrievalPort {
  readonly calls: v1.RetrieveRequest[] = [];

  async retrieve(_tenant: TenantScope, request: v1.RetrieveRequest): Promise<v1.RetrieveResponse> {
    this.calls.push(request);
    return {
      graph: { entities: [], relationships: [], rendered: 'Marie Curie -[directed]-> Radium Institute' },
      chunks: [HIT],
      refinedQuery: `${request.query} Marie Curie`,
      knowledgeBaseId: 'kb-1',
    };
  }
}

class SavedTurns implements Pick<ChatRepository, 'saveChatTurn'> {
  readonly turns: Array<{ scope: { tenantId: string; kbId: string }; turn: ChatTurn }> = [];

  async saveChatTurn(scope: { tenantId: string; kbId: string }, turn: ChatTurn): Promise<void> {
    this.turns.push({ scope, turn });
  }
}

const echoFirstSource: AnswerComposer = {
  async *compose(_question, _history, sources, graphContext) {
    yield `${sources[0]!.text} [1] `;
    yield `(${graphContext})`;
  },
};

describe('ChatEngine', () => {
  it('makes one retrieval call per turn and answers from its graph, refinement and chunks', async () => {
    const retrieval = new CountingRetrieval();
    const chats = new SavedTurns();
    const engine = new ChatEngine({ chats }, retrieval, 'model', echoFirstSource);
    const history = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }));
    const events: v1.ChatEvent[] = [];
    for await (const event of engine.chat({ tenantId: 't' }, { knowledgeBase: 'curie', question: ' Who directed it? ', history, topK: 0, chatId: '' })) events.push(event);

    expect(retrieval.calls).toHaveLength(1);
    expect(retrieval.calls[0]).toMatchObject({ knowledgeBase: 'curie', query: 'Who directed it?', topK: 5, mode: 'hybrid', refinement: 'model' });
    // The most recent 20 turns go along, oldest first.
    expect(retrieval.calls[0]!.history.map((m) => m.content)).toEqual(history.slice(-20).map((m) => m.content));
    expect(events.filter((e) => e.stage).map((e) => [e.stage!.name, e.stage!.detail])).toEqual([
      ['graph_retrieval', ''],
      ['refinement', '0 relationships'],
      ['chunk_retrieval', 'Who directed it? Marie Curie'],
      ['generation', '1 sources'],
    ]);
    const done = events.at(-1)!.done!;
    expect(done.text).toBe('Marie Curie directed the Radium Institute. [1] (Marie Curie -[directed]-> Radium Institute)');
    expect(done.refinedQuestion).toBe('Who directed it? Marie Curie');
    expect(done.citations.map((c) => c.chunkId)).toEqual(['c1']);
    // Saved under the knowledge base retrieval resolved, without a lookup of its own.
    expect(chats.turns).toHaveLength(1);
    expect(chats.turns[0]!.scope).toEqual({ tenantId: 't', kbId: 'kb-1' });

    await engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'And then?', history: [], topK: 3, chatId: done.chatId });
    expect(retrieval.calls).toHaveLength(2);
  });

  it('rejects a bad question before calling retrieval', async () => {
    const retrieval = new CountingRetrieval();
    const engine = new ChatEngine({ chats: new SavedTurns() }, retrieval, 'entities', echoFirstSource);
    await expect(engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: '  ', history: [], topK: 0, chatId: '' })).rejects.toThrow(/question is empty/);
    await expect(engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'x', history: [], topK: 51, chatId: '' })).rejects.toThrow(/top_k/);
    expect(retrieval.calls).toHaveLength(0);
  });

  describe('relevance floor', () => {
    const scored = (vector: number, i: number): v1.ChunkHit => ({
      ...HIT,
      chunkId: `c${i}`,
      sourceUri: `page${i}.md`,
      signals: [{ source: 'fulltext', score: 3, rank: i + 1 }, { source: 'vector', score: vector - i * 0.01, rank: i + 1 }],
    });
    const retrievalOf = (hits: v1.ChunkHit[]): RetrievalPort => ({
      retrieve: async () => ({ graph: undefined, chunks: hits, refinedQuery: 'q', knowledgeBaseId: 'kb-1' }),
    });
    let composed = 0;
    const counting: AnswerComposer = {
      async *compose() {
        composed++;
        yield 'composed [1]';
      },
    };

    it('says the knowledge base has nothing on an off-topic question and cites the closest sources, composing nothing', async () => {
      composed = 0;
      const hits = [0.18, 0.17, 0.16, 0.15].map(scored);
      const engine = new ChatEngine({ chats: new SavedTurns() }, retrievalOf(hits), 'entities', counting, 0.25);
      const answer = await engine.ask({ tenantId: 't' }, { knowledgeBase: 'nest', question: 'What is the capital of France?', history: [], topK: 0, chatId: '' });
      expect(answer.text).toBe('This knowledge base has nothing on that question. The closest sources are [1] page0.md, [2] page1.md, [3] page2.md.');
      expect(answer.citations.map((c) => c.chunkId)).toEqual(['c0', 'c1', 'c2']);
      expect(composed).toBe(0);
    });

    it('composes the answer when the best hit reaches the floor, when no floor is set, and when hits carry no dense signal', async () => {
      composed = 0;
      const high = [0.31, 0.2].map(scored);
      const low = [0.1].map(scored);
      const lexicalOnly = [{ ...HIT, signals: [{ source: 'fulltext', score: 2, rank: 1 }] }];
      for (const [hits, floor] of [[high, 0.25], [low, undefined], [lexicalOnly, 0.25]] as const) {
        const engine = new ChatEngine({ chats: new SavedTurns() }, retrievalOf([...hits]), 'entities', counting, floor);
        const answer = await engine.ask({ tenantId: 't' }, { knowledgeBase: 'nest', question: 'How do I start the app?', history: [], topK: 0, chatId: '' });
        expect(answer.text).toBe('composed [1]');
      }
      expect(composed).toBe(3);
    });
  });
});
