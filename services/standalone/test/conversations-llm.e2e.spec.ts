import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { FakeOpenAiServer, fakeProviderEnv, startStandaloneProcess } from '@trellis/testing';
import type { RecordedRequest, ScriptedReply, StandaloneProcess } from '@trellis/testing';
import { chatTurn, sample, waitUntilIndexed } from './helpers';

const TEXT =
  'The Radium Institute was founded in Paris in 1909 by the University of Paris and the Pasteur Institute. ' +
  'Its Curie laboratory was directed by Marie Curie. Polonium was discovered in 1898 by Marie Curie and Pierre Curie.';
const EXTRACTION = {
  entities: [
    { name: 'Radium Institute', type: 'organization', description: 'A research institute in Paris founded in 1909.' },
    { name: 'Marie Curie', type: 'person', description: 'Directed the Curie laboratory.' },
  ],
  relationships: [{ source: 'Marie Curie', target: 'Radium Institute', label: 'directed a laboratory of', description: 'Marie Curie directed the Curie laboratory.', strength: 8 }],
};
const CONDENSE_TIMEOUT_MS = 1000;

/** The condensation calls among the fake's requests: their system message is the condensation prompt. */
const isCondensation = (body: Record<string, unknown>) => {
  const [system] = body.messages as Array<{ role: string; content: string }>;
  return system?.content.startsWith("Rewrite the user's follow-up question") === true;
};

/**
 * Follow-ups condensed by a language model (the fake OpenAI-compatible server): the model's
 * rewrite is the question retrieval runs on; a garbage reply, or none within
 * TRELLIS_CHAT_CONDENSE_TIMEOUT_MS, falls back to the deterministic rewrite. The calls are
 * metered like every other model call, and a chat engine's condense prompt replaces the built-in one;
 * an engine may leave the deployment's reranker out.
 */
describe('standalone end to end: follow-ups condensed by a language model', () => {
  const fake = new FakeOpenAiServer(64);
  const condensations: ScriptedReply[] = [];
  let server: StandaloneProcess;
  let client: TrellisClient;
  const kb = 'curie-llm';
  const condensationRequests = (): RecordedRequest[] => fake.chatRequests().filter((r) => isCondensation(r.body));

  beforeAll(async () => {
    fake.respondWith((request) => {
      if (request.response_format) return { kind: 'content', content: JSON.stringify(EXTRACTION) };
      if (request.stream) return { kind: 'content', content: 'The Radium Institute was founded in 1909 [1].' };
      if (isCondensation(request)) return condensations.shift() ?? { kind: 'content', content: 'unscripted condensation' };
      // The question refinement with the graph: the question as the model got it.
      const user = (request.messages as Array<{ content: string }>).at(-1)!.content;
      return { kind: 'content', content: /Question: (.*)$/s.exec(user)?.[1] ?? 'Radium Institute' };
    });
    const baseUrl = await fake.start();
    server = await startStandaloneProcess({
      env: fakeProviderEnv(baseUrl, 64, {
        TRELLIS_CHAT_CONDENSE_TIMEOUT_MS: String(CONDENSE_TIMEOUT_MS),
        TRELLIS_RERANKER: 'http',
        TRELLIS_RERANKER_URL: baseUrl,
        TRELLIS_RERANKER_MODEL: 'fake-rerank',
      }),
    });
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: kb });
    const doc = await client.uploadDocument({ knowledgeBase: kb, filename: 'radium.txt', sourceUri: 'radium.txt' }, Buffer.from(TEXT));
    await waitUntilIndexed(client, kb, [doc.id]);
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await fake.stop();
  });

  it("retrieves with the model's rewrite of the follow-up, sent the conversation, and meters the call", async () => {
    const first = await chatTurn(client, { knowledgeBase: kb, question: 'Who founded the Radium Institute?' });
    expect(condensationRequests()).toHaveLength(0);
    const scrape = async () => (await (await fetch(`${server.httpUrl}/metrics`)).text());
    const callsBefore = sample(await scrape(), 'trellis_llm_requests_total', { operation: 'chat', outcome: 'ok' });

    condensations.push({ kind: 'content', content: 'When was the Radium Institute in Paris founded?' });
    const second = await chatTurn(client, { question: 'When was it founded?', chatId: first.done.chatId });
    expect(second.done.condensedQuestion).toBe('When was the Radium Institute in Paris founded?');
    expect(second.stages.get('condensation')).toBe('When was the Radium Institute in Paris founded?');
    // The refinement (echoing its question) and chunk retrieval ran on the rewrite.
    expect(second.stages.get('chunk_retrieval')).toBe('When was the Radium Institute in Paris founded?');

    const [call] = condensationRequests();
    expect(call!.body).toMatchObject({ model: 'fake-model', temperature: 0, max_tokens: 200 });
    const sent = (call!.body.messages as Array<{ content: string }>)[1]!.content;
    expect(sent).toContain('user: Who founded the Radium Institute?');
    expect(sent).toContain('assistant: The Radium Institute was founded in 1909 [1].');
    expect(sent).toMatch(/Follow-up question: When was it founded\?$/);
    // Metered with the other model calls: condensation and refinement, both non-streamed chat calls.
    expect(sample(await scrape(), 'trellis_llm_requests_total', { operation: 'chat', outcome: 'ok' })).toBe(callsBefore + 2);
    expect((await client.getChat(first.done.chatId)).messages[2]!.condensedQuestion).toBe('When was the Radium Institute in Paris founded?');
  });

  it('falls back to the deterministic rewrite when the model replies with garbage or not in time', async () => {
    const first = await client.ask({ knowledgeBase: kb, question: 'Who directed the Radium Institute laboratory?' });
    condensations.push({ kind: 'content', content: 'Sure! Here is a rewritten question:\n\n1. When was it founded?\n2. Why?' });
    const garbage = await chatTurn(client, { question: 'When was it founded?', chatId: first.chatId });
    expect(garbage.done.condensedQuestion).toBe('When was it founded? (Radium Institute)');
    expect(garbage.stages.get('condensation')).toBe('When was it founded? (Radium Institute)');

    condensations.push({ kind: 'content', content: '' });
    const empty = await client.ask({ question: 'Who else worked there?', chatId: first.chatId });
    expect(empty.condensedQuestion).toBe('Who else worked there? (Radium Institute)');

    condensations.push({ kind: 'hang', ms: CONDENSE_TIMEOUT_MS * 5 });
    const started = Date.now();
    const late = await client.ask({ question: 'And its address?', chatId: first.chatId });
    expect(late.condensedQuestion).toBe('And its address? (Radium Institute)');
    expect(Date.now() - started).toBeLessThan(CONDENSE_TIMEOUT_MS * 4);
  });

  it("uses a chat engine's condense prompt instead of the built-in one", async () => {
    await client.createChatEngine({ name: 'terse', knowledgeBases: [kb], condensePrompt: "Rewrite the user's follow-up question in five words." });
    const first = await client.ask({ question: 'Who founded the Radium Institute?', engine: 'terse' });
    condensations.push({ kind: 'content', content: 'Radium Institute founding year?' });
    const second = await client.ask({ question: 'When was it founded?', chatId: first.chatId, engine: 'terse' });
    expect(second.condensedQuestion).toBe('Radium Institute founding year?');
    const system = (condensationRequests().at(-1)!.body.messages as Array<{ content: string }>)[0]!.content;
    expect(system).toBe("Rewrite the user's follow-up question in five words.");
  });

  it("leaves the deployment's reranker out for an engine that says so, and uses it otherwise", async () => {
    const reranks = () => fake.requests.filter((r) => r.path.endsWith('/rerank')).length;
    await client.createChatEngine({ name: 'no-rerank', knowledgeBases: [kb], noRerank: true });
    expect((await client.getChatEngine('no-rerank')).noRerank).toBe(true);
    const before = reranks();
    await client.ask({ question: 'Who directed the Curie laboratory?', engine: 'no-rerank' });
    expect(reranks()).toBe(before);
    await client.ask({ knowledgeBase: kb, question: 'Who directed the Curie laboratory?' });
    expect(reranks()).toBeGreaterThan(before);
    expect((await client.getChatEngine('terse')).noRerank).toBe(false);
  });
});
