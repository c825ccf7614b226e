import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, fakeProviderEnv, startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { waitUntilIndexed } from './helpers';

const TEXT = 'Ada Lovelace wrote the first published algorithm for the Analytical Engine, a machine designed by Charles Babbage.';

const EXTRACTION = {
  entities: [
    { name: 'Ada Lovelace', type: 'person', description: 'Wrote the first published algorithm.' },
    { name: 'Analytical Engine', type: 'machine', description: 'A mechanical computer designed by Charles Babbage.' },
  ],
  relationships: [
    { source: 'Ada Lovelace', target: 'Analytical Engine', label: 'wrote an algorithm for', description: 'Ada Lovelace wrote the first algorithm for the Analytical Engine.', strength: 9 },
    { source: 'Charles Babbage', target: 'Analytical Engine', label: 'designed', description: 'Babbage designed the Analytical Engine.', strength: 8 },
  ],
};

describe('standalone with an OpenAI-compatible provider (fake HTTP server)', () => {
  const fake = new FakeOpenAiServer(64);
  let server: StandaloneProcess;
  let client: TrellisClient;

  beforeAll(async () => {
    fake.respondWith((request) => {
      if (request.response_format) return { kind: 'content', content: `Here you go:\n\`\`\`json\n${JSON.stringify(EXTRACTION)}\n\`\`\`` };
      if (request.stream) return { kind: 'content', content: 'Ada Lovelace wrote the first published algorithm [1].' };
      return { kind: 'content', content: 'Ada Lovelace first published algorithm Analytical Engine' };
    });
    const baseUrl = await fake.start();
    server = await startStandaloneProcess({
      env: fakeProviderEnv(baseUrl, 64, {
        TRELLIS_RERANKER: 'http',
        TRELLIS_RERANKER_URL: baseUrl,
        TRELLIS_RERANKER_MODEL: 'fake-rerank',
      }),
    });
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: 'llm' });
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await fake.stop();
  });

  const extractionCalls = () => fake.chatRequests().filter((r) => r.body.response_format !== undefined).length;

  it('extracts with one structured-output call per chunk and writes the graph', async () => {
    const doc = await client.uploadDocument({ knowledgeBase: 'llm', filename: 'ada.txt' }, Buffer.from(TEXT));
    await waitUntilIndexed(client, 'llm', [doc.id]);
    expect(extractionCalls()).toBe(1);
    const call = fake.chatRequests()[0]!.body;
    expect(call.model).toBe('fake-model');
    expect((call.response_format as { type: string }).type).toBe('json_schema');
    const graph = await client.exportGraph('llm');
    expect(graph.entities.map((e) => `${e.name}:${e.type}`).sort()).toEqual(['Ada Lovelace:person', 'Analytical Engine:machine', 'Charles Babbage:concept']);
    expect(graph.relationships.map((r) => r.label).sort()).toEqual(['designed', 'wrote an algorithm for']);
    expect(fake.requests.some((r) => r.path.endsWith('/embeddings') && r.body.model === 'fake-embed')).toBe(true);
  });

  it('reuses the cached extraction for identical chunk content', async () => {
    const before = extractionCalls();
    const copy = await client.uploadDocument({ knowledgeBase: 'llm', filename: 'copy-of-ada.txt' }, Buffer.from(TEXT));
    await waitUntilIndexed(client, 'llm', [copy.id]);
    expect(extractionCalls()).toBe(before);
    const entity = await client.getEntity('llm', 'Ada Lovelace');
    expect(entity.entity?.mentionCount).toBe(2);
  });

  it('re-scores retrieval candidates with the configured /rerank endpoint', async () => {
    const other = await client.uploadDocument({ knowledgeBase: 'llm', filename: 'babbage.txt' }, Buffer.from('Charles Babbage designed the Difference Engine and the Analytical Engine. Babbage Babbage Babbage.'));
    await waitUntilIndexed(client, 'llm', [other.id]);
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'llm', query: 'Tell me about Babbage', mode: 'fulltext', topK: 3 });
    const rerank = fake.requests.filter((r) => r.path.endsWith('/rerank'));
    expect(rerank.length).toBeGreaterThan(0);
    expect(rerank.at(-1)!.body.model).toBe('fake-rerank');
    expect(chunks[0]?.documentId).toBe(other.id);
    expect(chunks[0]?.signals.map((s) => s.source)).toContain('rerank');
  });

  it('streams the model answer with citations to the retrieved chunk', async () => {
    const events: v1.ChatEvent[] = [];
    for await (const event of client.chat({ knowledgeBase: 'llm', question: 'Who wrote the first algorithm?' })) events.push(event);
    const done = events.at(-1)!.done!;
    expect(done.text).toBe('Ada Lovelace wrote the first published algorithm [1].');
    expect(events.filter((e) => e.token).length).toBeGreaterThan(3);
    expect(done.refinedQuestion).toBe('Ada Lovelace first published algorithm Analytical Engine');
    expect(done.citations).toHaveLength(1);
    expect(done.citations[0]!.snippet).toContain('Ada Lovelace');
    const prompt = JSON.stringify(fake.chatRequests().at(-1)!.body.messages);
    expect(prompt).toContain('[1]');
    expect(prompt).toContain('Analytical Engine');
  });
});
