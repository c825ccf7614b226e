import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, fakeProviderEnv, startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { waitUntilIndexed } from './helpers';

/** What the fake model answers for a chunk: entities named in the text between [[ and ]]. */
function graphFor(text: string): unknown {
  const names = [...text.matchAll(/\[\[([^\]]+)\]\]/g)].map((m) => m[1]!);
  return {
    entities: names.map((name) => ({ name, type: 'person', description: `${name} appears in the text.`, attributes: [{ key: 'source', value: 'test' }] })),
    relationships: names.slice(1).map((name) => ({ source: names[0], target: name, label: 'knows', description: `${names[0]} knows ${name}.`, strength: 7 })),
  };
}

type Message = { role: string; content: string };

describe('LLM extraction over gRPC against an OpenAI-compatible server (fake HTTP)', () => {
  const fake = new FakeOpenAiServer(64);
  let server: StandaloneProcess;
  let client: TrellisClient;
  /** How long the fake model takes to answer, when a test needs calls to overlap. */
  let answerDelayMs: number | undefined;

  beforeAll(async () => {
    fake.respondWith((request) => {
      const messages = request.messages as Message[];
      return { kind: 'content', content: JSON.stringify(graphFor(messages.find((m) => m.role === 'user')!.content)), delayMs: answerDelayMs };
    });
    const baseUrl = await fake.start();
    server = await startStandaloneProcess({
      env: fakeProviderEnv(baseUrl, 64, {
        TRELLIS_LLM_TIMEOUT_MS: '1000',
        // The metrics below are read by knowledge-base name.
        TRELLIS_METRICS_NAMES: 'true',
        TRELLIS_LLM_MAX_RETRIES: '3',
        TRELLIS_LLM_MAX_CONCURRENCY: '2',
        TRELLIS_LLM_REQUESTS_PER_MINUTE: '6000',
        TRELLIS_LLM_PRICES: 'kb-model=1000:2000',
      }),
    });
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({
      name: 'people',
      models: { embeddingModel: '', embeddingDimensions: 0, llmModel: 'kb-model', extractionPromptVersion: '' },
      extraction: { entityTypes: ['person', 'place'], instructions: 'Mark every inventor.', examples: '', gleaningPasses: 0, outputMode: 'auto' },
    });
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await fake.stop();
  });

  const extractionCalls = () => fake.chatRequests().filter((r) => r.body.response_format !== undefined);

  async function ingest(filename: string, text: string): Promise<v1.Document> {
    const uploaded = await client.uploadDocument({ knowledgeBase: 'people', filename }, Buffer.from(text));
    await waitUntilIndexed(client, 'people', [uploaded.id]);
    return client.getDocument('people', uploaded.id);
  }

  it("extracts with the knowledge base's model and prompt, writes the graph and shows token usage", async () => {
    const doc = await ingest('ada.txt', '[[Ada Lovelace]] corresponded with [[Charles Babbage]] about the engine.');
    const calls = extractionCalls();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body.model).toBe('kb-model');
    const system = (calls[0]!.body.messages as Message[])[0]!.content;
    expect(system).toContain('Use only these entity types: person, place');
    expect(system).toContain('Mark every inventor.');
    const graph = await client.exportGraph('people');
    expect(graph.entities.map((e) => `${e.name}:${e.type}`).sort()).toEqual(['Ada Lovelace:person', 'Charles Babbage:person']);
    expect(graph.relationships.map((r) => r.label)).toEqual(['knows']);
    expect(doc.llmUsage).toMatchObject({ calls: 1, cacheHits: 0 });
    expect(doc.llmUsage!.inputTokens).toBeGreaterThan(100);
    expect(doc.llmUsage!.outputTokens).toBeGreaterThan(10);
    expect(doc.llmUsage!.estimatedCostUsd).toBeCloseTo((doc.llmUsage!.inputTokens * 1000 + doc.llmUsage!.outputTokens * 2000) / 1e6, 6);
  });

  it('makes zero LLM calls for identical content in another document, and counts the cache hit', async () => {
    const before = extractionCalls().length;
    const copy = await ingest('ada-copy.txt', '[[Ada Lovelace]] corresponded with [[Charles Babbage]] about the engine.');
    expect(extractionCalls()).toHaveLength(before);
    expect(copy.llmUsage).toMatchObject({ calls: 0, inputTokens: 0, cacheHits: 1 });
    const kb = await client.getKnowledgeBase('people');
    expect(kb.llmUsage).toMatchObject({ calls: 1, cacheHits: 1 });
    expect((await client.getEntity('people', 'Ada Lovelace')).entity?.mentionCount).toBe(2);
  });

  it('retries 429 with Retry-After, 500 and a hang past the timeout, then indexes the chunk', async () => {
    const before = extractionCalls().length;
    fake.enqueue({ kind: 'status', status: 429, retryAfterSeconds: 1 }, { kind: 'status', status: 500 }, { kind: 'hang', ms: 3_000 });
    const doc = await ingest('retries.txt', '[[Grace Hopper]] worked with [[Howard Aiken]] at Harvard.');
    expect(extractionCalls().length - before).toBe(4);
    expect(doc.status).toBe('INDEX_STATUS_GRAPHED');
    expect((await client.getEntity('people', 'Grace Hopper')).entity?.name).toBe('Grace Hopper');
  });

  it('keeps what it can from malformed JSON and schema-violating items instead of failing the chunk', async () => {
    fake.enqueue({ kind: 'content', content: 'Sorry, {"entities": [ this is not JSON' });
    const broken = await ingest('broken.txt', '[[Alan Turing]] is not extracted from a broken reply.');
    expect(broken.status).toBe('INDEX_STATUS_GRAPHED');
    expect(broken.llmUsage?.calls).toBe(1);
    fake.enqueue({
      kind: 'content',
      content: JSON.stringify({
        entities: [{ name: 'Emmy Noether', type: 'person', description: 'Mathematician.' }, { type: 'nameless' }, 'junk'],
        relationships: [{ source: 'Emmy Noether', target: 'Göttingen', label: 'worked in', description: 'She worked in Göttingen.', strength: 42 }, { source: 'Emmy Noether' }],
      }),
    });
    const partial = await ingest('partial.txt', 'A reply with some invalid items about Emmy.');
    expect(partial.status).toBe('INDEX_STATUS_GRAPHED');
    const noether = await client.getEntity('people', 'Emmy Noether');
    expect(noether.relationships.map((r) => `${r.sourceName} ${r.label} ${r.targetName}`)).toEqual(['Emmy Noether worked in Göttingen']);
    const metrics = await (await fetch(`${server.httpUrl}/metrics`)).text();
    expect(metrics).toMatch(/trellis_extraction_items_total\{kind="reply",outcome="dropped",reason="unparseable"[^}]*\} 1/);
    expect(metrics).toMatch(/trellis_extraction_items_total\{kind="entity",outcome="dropped",reason="missing_name"[^}]*\} 1/);
    expect(metrics).toMatch(/trellis_extraction_items_total\{kind="entity",outcome="added",reason="relationship_endpoint"[^}]*\} 1/);
    expect(metrics).toMatch(/trellis_extraction_cache_total\{knowledge_base="people",outcome="hit"[^}]*\} 1/);
    expect(metrics).toMatch(/trellis_extraction_llm_tokens_total\{knowledge_base="people",direction="input"/);
  });

  it("extracts a document's chunks side by side, as many calls at once as the LLM concurrency allows", async () => {
    // A chunk of its own per part; keyed by their document, the chunks went one call at a time.
    const parts = Array.from({ length: 6 }, (_, i) => `# Part ${i}\n\n[[Person ${i}]] met [[Friend ${i}]]. ${'They talked about the engine at length. '.repeat(60)}`);
    const before = extractionCalls().length;
    answerDelayMs = 300;
    fake.maxChatInFlightByModel.clear();
    try {
      const doc = await ingest('parts.md', parts.join('\n\n'));
      expect(doc.status).toBe('INDEX_STATUS_GRAPHED');
    } finally {
      answerDelayMs = undefined;
    }
    expect(extractionCalls().length - before).toBeGreaterThanOrEqual(6);
    // TRELLIS_LLM_MAX_CONCURRENCY is 2 per model. Summary refreshes use the default model and may overlap.
    expect(fake.maxChatInFlightByModel.get('kb-model')).toBe(2);
    for (const most of fake.maxChatInFlightByModel.values()) expect(most).toBeLessThanOrEqual(2);
    const names = (await client.exportGraph('people')).entities.map((e) => e.name);
    expect(names).toEqual(expect.arrayContaining(parts.map((_, i) => `Person ${i}`)));
  });

  it('re-extracts identical content after the prompt changes, with the new prompt', async () => {
    const updated = await client.updateKnowledgeBase({
      knowledgeBase: 'people',
      extraction: { entityTypes: ['person'], instructions: 'Mark every scientist.', examples: '', gleaningPasses: 1, outputMode: 'json_object' },
    });
    expect(updated.extraction).toMatchObject({ instructions: 'Mark every scientist.', gleaningPasses: 1, outputMode: 'json_object' });
    const before = extractionCalls().length;
    const again = await ingest('ada-again.txt', '[[Ada Lovelace]] corresponded with [[Charles Babbage]] about the engine.');
    const calls = extractionCalls().slice(before);
    expect(calls).toHaveLength(2);
    // Fields the update left unset kept their values.
    expect(calls[0]!.body.model).toBe('kb-model');
    expect(calls.map((c) => c.body.response_format)).toEqual([{ type: 'json_object' }, { type: 'json_object' }]);
    expect((calls[0]!.body.messages as Message[])[0]!.content).toContain('Mark every scientist.');
    expect((calls[1]!.body.messages as Message[]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(again.llmUsage).toMatchObject({ calls: 2, cacheHits: 0 });
  });
});
