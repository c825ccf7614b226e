import { describe, expect, it } from 'vitest';
import type { TenantScope, v1 } from '@trellis/contracts';
import type { ChatRepository, ChatTurn } from '@trellis/storage';
import type { AnswerComposer } from './answer-composer';
import { ChatEngine } from './chat-engine';
import { ExtractiveOverviewComposer } from './global-answer-composer';
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
      ...(request.scope === undefined
        ? { route: '', routeReason: '', communities: [] }
        : { route: 'global', routeReason: 'corpus-wide cue "main themes"', communities: [COMMUNITY], chunks: [HIT], graph: undefined }),
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
    const engine = new ChatEngine({ chats }, retrieval, 'model', echoFirstSource, new ExtractiveOverviewComposer());
    const history = Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: i % 2 ? `answer ${i}` : `What is the Radium Institute (${i})?` }));
    const events: v1.ChatEvent[] = [];
    for await (const event of engine.chat({ tenantId: 't' }, { knowledgeBase: 'curie', question: ' Who directed it? ', history, topK: 0, chatId: '', scope: '', engine: '' })) events.push(event);

    expect(retrieval.calls).toHaveLength(1);
    // The follow-up is condensed with the previous question's names before retrieval.
    expect(retrieval.calls[0]).toMatchObject({ knowledgeBase: 'curie', query: 'Who directed it? (Radium Institute)', topK: 5, mode: 'hybrid', refinement: 'model' });
    // The most recent turns within the default bounds (6 turns) go along, oldest first.
    expect(retrieval.calls[0]!.history.map((m) => m.content)).toEqual(history.slice(-12).map((m) => m.content));
    expect(events.filter((e) => e.stage).map((e) => [e.stage!.name, e.stage!.detail])).toEqual([
      ['condensation', 'Who directed it? (Radium Institute)'],
      ['graph_retrieval', ''],
      ['refinement', '0 relationships'],
      ['chunk_retrieval', 'Who directed it? (Radium Institute) Marie Curie'],
      ['generation', '1 sources'],
    ]);
    const done = events.at(-1)!.done!;
    expect(done.text).toBe('Marie Curie directed the Radium Institute. [1] (Marie Curie -[directed]-> Radium Institute)');
    expect(done.refinedQuestion).toBe('Who directed it? (Radium Institute) Marie Curie');
    expect(done.condensedQuestion).toBe('Who directed it? (Radium Institute)');
    expect(chats.turns[0]?.turn).toMatchObject({ question: 'Who directed it?', condensedQuestion: 'Who directed it? (Radium Institute)' });
    expect(done.citations.map((c) => c.chunkId)).toEqual(['c1']);
    // Saved under the knowledge base retrieval resolved, without a lookup of its own.
    expect(chats.turns).toHaveLength(1);
    expect(chats.turns[0]!.scope).toEqual({ tenantId: 't', kbId: 'kb-1' });

    await engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'And then?', history: [], topK: 3, chatId: done.chatId, scope: '', engine: '' });
    expect(retrieval.calls).toHaveLength(2);
  });

  it('rejects a bad question before calling retrieval', async () => {
    const retrieval = new CountingRetrieval();
    const engine = new ChatEngine({ chats: new SavedTurns() }, retrieval, 'entities', echoFirstSource, new ExtractiveOverviewComposer());
    await expect(engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: '  ', history: [], topK: 0, chatId: '', scope: '', engine: '' })).rejects.toThrow(/question is empty/);
    await expect(engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'x', history: [], topK: 51, chatId: '', scope: '', engine: '' })).rejects.toThrow(/top_k/);
    await expect(engine.ask({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'x', history: [], topK: 0, chatId: '', scope: 'everywhere', engine: '' })).rejects.toThrow(/scope/);
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
      retrieve: async () => ({ graph: undefined, chunks: hits, refinedQuery: 'q', knowledgeBaseId: 'kb-1', route: 'local', routeReason: '', communities: [] }),
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
      const engine = new ChatEngine({ chats: new SavedTurns() }, retrievalOf(hits), 'entities', counting, new ExtractiveOverviewComposer(), 0.25);
      const answer = await engine.ask({ tenantId: 't' }, { knowledgeBase: 'nest', question: 'What is the capital of France?', history: [], topK: 0, chatId: '', scope: '', engine: '' });
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
        const engine = new ChatEngine({ chats: new SavedTurns() }, retrievalOf([...hits]), 'entities', counting, new ExtractiveOverviewComposer(), floor);
        const answer = await engine.ask({ tenantId: 't' }, { knowledgeBase: 'nest', question: 'How do I start the app?', history: [], topK: 0, chatId: '', scope: '', engine: '' });
        expect(answer.text).toBe('composed [1]');
      }
      expect(composed).toBe(3);
    });
  });

  it('answers a question retrieval routed global from community reports, citing the community and its chunks, and says why', async () => {
    const retrieval = new CountingRetrieval();
    const engine = new ChatEngine({ chats: new SavedTurns() }, retrieval, 'entities', echoFirstSource, new ExtractiveOverviewComposer());
    const events: v1.ChatEvent[] = [];
    for await (const event of engine.chat({ tenantId: 't' }, { knowledgeBase: 'curie', question: 'What are the main themes?', history: [], topK: 0, chatId: '', scope: 'auto', engine: '' })) events.push(event);
    expect(retrieval.calls[0]).toMatchObject({ scope: 'auto' });
    expect(events.filter((e) => e.stage).map((e) => e.stage!.name)).toEqual(['graph_retrieval', 'routing', 'community_retrieval', 'generation']);
    expect(events.find((e) => e.stage?.name === 'routing')!.stage!.detail).toBe('global: corpus-wide cue "main themes"');
    const done = events.at(-1)!.done!;
    expect(done.text).toContain('1. Curie and radioactivity: Marie Curie studied radioactivity. [1]');
    expect(done).toMatchObject({ route: 'global', routeReason: 'corpus-wide cue "main themes"' });
    expect(done.citations).toEqual([expect.objectContaining({ index: 1, communityId: 'community_1', chunkId: 'c1', documentId: 'd1', sourceChunkIds: ['c1'] })]);
  });
});

const COMMUNITY: v1.CommunityHit = {
  id: 'community_1',
  level: 0,
  title: 'Curie and radioactivity',
  summary: 'Marie Curie studied radioactivity. She directed the Radium Institute.',
  score: 0.8,
  keyFacts: [{ text: 'Marie Curie directed Radium Institute', relationshipId: 'r1', chunkIds: ['c1'] }],
};
