import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { v1 } from '@trellis/contracts';
import { OpenAiChatModel, createOpenAiClient } from '@trellis/models';
import { FakeOpenAiServer } from '@trellis/testing';
import { ExtractiveOverviewComposer, MapReduceAnswerComposer, communityCitationsIn } from './global-answer-composer';

const community = (id: string, title: string, summary: string, chunkIds: string[]): v1.CommunityHit => ({
  id,
  level: 0,
  title,
  summary,
  score: 0.5,
  keyFacts: [{ text: `${title} fact`, relationshipId: `r-${id}`, chunkIds }],
});
const COMMUNITIES = [
  community('music', 'Bach and Leipzig', 'Bach worked in Leipzig. He wrote cantatas.', ['c1', 'c2']),
  community('science', 'Curie and radium', 'Marie Curie studied radium.', ['c3']),
  community('sport', 'Buffalo Bills', 'The Bills play football.', ['c4']),
];
const collect = async (pieces: AsyncIterable<string>) => {
  let text = '';
  for await (const piece of pieces) text += piece;
  return text;
};

describe('global answers', () => {
  const fake = new FakeOpenAiServer(8);
  let llm: OpenAiChatModel;

  beforeAll(async () => {
    const baseUrl = await fake.start();
    llm = new OpenAiChatModel(createOpenAiClient({ baseUrl, apiKey: 'test', timeoutMs: 10_000, maxRetries: 0 }), 'fake-model');
  });

  afterAll(async () => {
    await fake.stop();
  });

  it('map-reduce: one map call per community, points scored above zero reach the reduce call best first, with their community numbers', async () => {
    const before = fake.chatRequests().length;
    fake.respondWith((request) => {
      const messages = request.messages as Array<{ content: string }>;
      const user = messages[1]!.content;
      if (request.stream === true) return { kind: 'content', content: 'Music and science stand out [1][2].' };
      if (user.includes('Bach and Leipzig')) return { kind: 'content', content: JSON.stringify({ points: [{ text: 'Baroque music in Leipzig', score: 80 }] }) };
      if (user.includes('Curie')) return { kind: 'content', content: JSON.stringify({ points: [{ text: 'Radium research', score: 90 }, { text: 'irrelevant', score: 0 }] }) };
      return { kind: 'content', content: JSON.stringify({ points: [] }) };
    });
    const text = await collect(new MapReduceAnswerComposer(llm).compose('What are the main themes?', COMMUNITIES));
    expect(text).toBe('Music and science stand out [1][2].');
    const requests = fake.chatRequests().slice(before);
    expect(requests).toHaveLength(4);
    const reduce = requests.find((r) => r.body.stream === true)!;
    const prompt = (reduce.body.messages as Array<{ content: string }>)[1]!.content;
    expect(prompt).toContain('- Radium research [2] (importance 90)\n- Baroque music in Leipzig [1] (importance 80)\n\nQuestion: What are the main themes?');
    expect(prompt).not.toContain('irrelevant');
  });

  it('map-reduce says so, without a reduce call, when no community has a point', async () => {
    const before = fake.chatRequests().length;
    fake.respondWith(() => ({ kind: 'content', content: JSON.stringify({ points: [{ text: 'nothing', score: 0 }] }) }));
    const text = await collect(new MapReduceAnswerComposer(llm).compose('What about dragons?', COMMUNITIES));
    expect(text).toBe('The communities of this knowledge base say nothing that answers this question.');
    expect(fake.chatRequests().slice(before).every((r) => r.body.stream !== true)).toBe(true);
  });

  it('extractive overview: title and first sentence per community, each citing it; citations name the community and its chunks', async () => {
    const text = await collect(new ExtractiveOverviewComposer().compose('What are the main themes?', COMMUNITIES.slice(0, 2)));
    expect(text).toBe('Across the knowledge base, the most relevant themes are:\n1. Bach and Leipzig: Bach worked in Leipzig. [1]\n2. Curie and radium: Marie Curie studied radium. [2]\n');
    const sources = [{ chunkId: 'c2', documentId: 'd2', sourceUri: 'bach.txt' }] as v1.ChunkHit[];
    expect(communityCitationsIn(text, COMMUNITIES, sources)).toEqual([
      expect.objectContaining({ index: 1, communityId: 'music', sourceChunkIds: ['c1', 'c2'], chunkId: 'c2', documentId: 'd2', sourceUri: 'bach.txt' }),
      expect.objectContaining({ index: 2, communityId: 'science', sourceChunkIds: ['c3'], chunkId: 'c3', documentId: '' }),
    ]);
  });
});
