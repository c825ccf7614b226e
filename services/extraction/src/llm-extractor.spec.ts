import type { ExtractionSettings } from '@trellis/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '@trellis/contracts';
import { DEFAULT_RETRY_POLICY, shouldRetry } from '@trellis/messaging';
import { BudgetedChatModel, OpenAiChatModel, createOpenAiClient } from '@trellis/models';
import type { CallPriority } from '@trellis/models';
import { FakeOpenAiServer } from '@trellis/testing';
import { extractionPrompt } from '@trellis/models';
import { ExtractionReport } from './extraction-report';
import { JsonModeMemory, LlmExtractor } from './llm-extractor';

const REPLY = {
  entities: [
    { name: 'Ada Lovelace', type: 'person', description: 'Wrote the first algorithm.', attributes: [{ key: 'born', value: '1815' }] },
    { name: 'Analytical Engine', type: 'machine', description: 'A mechanical computer.', attributes: [] },
  ],
  relationships: [{ source: 'Ada Lovelace', target: 'Analytical Engine', label: 'wrote for', description: 'She wrote an algorithm for it.', strength: 9 }],
};
const content = (value: unknown) => ({ kind: 'content' as const, content: typeof value === 'string' ? value : JSON.stringify(value) });
const settings = (extraction: Partial<ExtractionSettings> = {}): ExtractionSettings => ({ entityTypes: [], instructions: '', examples: '', gleaningPasses: 0, outputMode: 'auto', ...extraction });

describe('LlmExtractor against an OpenAI-compatible server', () => {
  const fake = new FakeOpenAiServer();
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await fake.start();
  });
  afterAll(async () => {
    await fake.stop();
  });
  afterEach(() => {
    fake.requests.length = 0;
    fake.respondWith(() => content(REPLY));
  });

  function extractor(extraction: Partial<ExtractionSettings> = {}, options: { model?: string; timeoutMs?: number; maxRetries?: number; memory?: JsonModeMemory } = {}) {
    const client = createOpenAiClient({ baseUrl, apiKey: 'k', timeoutMs: options.timeoutMs ?? 5_000, maxRetries: options.maxRetries ?? 2 });
    const llm = new OpenAiChatModel(client, options.model ?? 'fake-model');
    return new LlmExtractor(llm, extractionPrompt({ extractionPromptVersion: '', extraction: settings(extraction) }), options.memory);
  }

  it('makes one json_schema call per chunk and returns the validated graph with usage', async () => {
    fake.respondWith(() => content(REPLY));
    const report = new ExtractionReport();
    const result = await extractor().extract('Ada Lovelace wrote for the Analytical Engine.', { heading: 'History' }, report);
    expect(fake.chatRequests()).toHaveLength(1);
    const body = fake.chatRequests()[0]!.body;
    expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: 'knowledge_graph' } });
    expect(JSON.stringify(body.messages)).toContain('Section: History');
    expect(result.entities[0]).toEqual({ name: 'Ada Lovelace', type: 'person', description: 'Wrote the first algorithm.', attributes: { born: '1815' } });
    expect(result.relationships).toHaveLength(1);
    expect(report.calls).toBe(1);
    expect(report.inputTokens).toBeGreaterThan(100);
    expect(report.outputTokens).toBeGreaterThan(10);
  });

  it("sends the knowledge base's entity types, instructions and examples", async () => {
    await extractor({ entityTypes: ['person', 'machine'], instructions: 'Name every inventor.', examples: 'Text: Babbage built it.' }).extract('Ada.', { heading: '' });
    const system = (fake.chatRequests()[0]!.body.messages as Array<{ role: string; content: string }>)[0]!;
    expect(system.role).toBe('system');
    expect(system.content).toContain('Use only these entity types: person, machine');
    expect(system.content).toContain('Name every inventor.');
    expect(system.content).toContain('Text: Babbage built it.');
  });

  it('gleans with a second turn and merges what it adds', async () => {
    fake.enqueue(content(REPLY), content({ entities: [{ name: 'Charles Babbage', type: 'person', description: 'Designed the engine.', attributes: [] }, REPLY.entities[0]], relationships: [{ source: 'Charles Babbage', target: 'Analytical Engine', label: 'designed', description: 'He designed it.', strength: 8 }] }));
    const report = new ExtractionReport();
    const result = await extractor({ gleaningPasses: 1 }).extract('text', { heading: '' }, report);
    expect(fake.chatRequests()).toHaveLength(2);
    const second = fake.chatRequests()[1]!.body.messages as Array<{ role: string; content: string }>;
    expect(second.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(second[3]!.content).toMatch(/missed/);
    expect(result.entities.map((e) => e.name)).toEqual(['Ada Lovelace', 'Analytical Engine', 'Charles Babbage']);
    expect(result.relationships.map((r) => r.label)).toEqual(['wrote for', 'designed']);
    expect(report.calls).toBe(2);
    expect(report.total('entity', 'dropped', 'duplicate')).toBe(1);
  });

  it("queues a chunk's first call as new work and its gleaning turn as a follow-up, behind questions", async () => {
    const asked: CallPriority[] = [];
    const budget = { acquire: async (_model: string, _tokens: number, priority: CallPriority) => (asked.push(priority), async () => undefined) };
    const client = createOpenAiClient({ baseUrl, apiKey: 'k', timeoutMs: 5_000 });
    const llm = new BudgetedChatModel(new OpenAiChatModel(client, 'fake-model'), budget);
    await new LlmExtractor(llm, extractionPrompt({ extractionPromptVersion: '', extraction: settings({ gleaningPasses: 1 }) })).extract('text', { heading: '' });
    expect(asked).toEqual(['bulk', 'follow-up']);
  });

  it('falls back to JSON mode when the provider rejects json_schema, and remembers it for the model', async () => {
    fake.respondWith((request) =>
      (request.response_format as { type?: string } | undefined)?.type === 'json_schema'
        ? { kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'response_format json_schema is not supported' } }) }
        : content(`Here is the graph: ${JSON.stringify(REPLY)}`),
    );
    const memory = new JsonModeMemory();
    const first = await extractor({}, { memory, model: 'no-schema-model' }).extract('text', { heading: '' });
    expect(first.entities).toHaveLength(2);
    expect(fake.chatRequests().map((r) => (r.body.response_format as { type: string }).type)).toEqual(['json_schema', 'json_object']);
    await extractor({}, { memory, model: 'no-schema-model' }).extract('other text', { heading: '' });
    expect(fake.chatRequests().map((r) => (r.body.response_format as { type: string }).type)).toEqual(['json_schema', 'json_object', 'json_object']);
    // Explicit json_schema mode does not fall back: the rejection is an error that no retry fixes.
    await expect(extractor({ outputMode: 'json_schema' }, { memory, model: 'no-schema-model' }).extract('text', { heading: '' })).rejects.toMatchObject({
      code: ErrorCode.FailedPrecondition,
    });
  });

  it('uses JSON mode from the start when the knowledge base asks for it', async () => {
    await extractor({ outputMode: 'json_object' }).extract('text', { heading: '' });
    expect(fake.chatRequests()[0]!.body.response_format).toEqual({ type: 'json_object' });
  });

  it('returns a partial result, not a failure, for malformed JSON and schema-violating items', async () => {
    fake.enqueue(content('I could not decide {"entities": [oops'));
    const report = new ExtractionReport();
    expect(await extractor().extract('text', { heading: '' }, report)).toEqual({ entities: [], relationships: [] });
    expect(report.total('reply', 'dropped', 'unparseable')).toBe(1);
    fake.enqueue(content({ entities: [{ name: 'Good', type: 't', description: 'd' }, { type: 'no name' }, 12], relationships: [{ source: 'Good', target: 'Elsewhere', strength: 99 }, { target: 'x' }] }));
    const partial = await extractor().extract('text', { heading: '' });
    expect(partial.entities.map((e) => [e.name, e.needsReview ?? false])).toEqual([['Good', false], ['Elsewhere', true]]);
    expect(partial.relationships).toEqual([{ source: 'Good', target: 'Elsewhere', label: 'related to', description: '', strength: 10 }]);
  });

  it('retries 429 honouring Retry-After, and 500, then succeeds', async () => {
    fake.enqueue({ kind: 'status', status: 429, retryAfterSeconds: 1 }, { kind: 'status', status: 500 });
    const started = Date.now();
    const result = await extractor().extract('text', { heading: '' });
    expect(result.entities).toHaveLength(2);
    expect(fake.chatRequests()).toHaveLength(3);
    // Retry-After: 1 is a floor, not a timing guess: the SDK's own backoff would start at 0.5 s.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  it('retries a request that hangs past the timeout', async () => {
    fake.enqueue({ kind: 'hang', ms: 3_000 });
    const result = await extractor({}, { timeoutMs: 500 }).extract('text', { heading: '' });
    expect(result.entities).toHaveLength(2);
    expect(fake.chatRequests()).toHaveLength(2);
  });

  it('fails as UNAVAILABLE once retries are exhausted, so the event bus retries the event later', async () => {
    fake.enqueue({ kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const error = await extractor({}, { maxRetries: 1 }).extract('text', { heading: '' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: ErrorCode.Unavailable });
    expect(fake.chatRequests()).toHaveLength(2);
    // The bus delivers the event again (with backoff) instead of dead-lettering it at once.
    expect(shouldRetry(error, 1, DEFAULT_RETRY_POLICY.maxAttempts)).toBe(true);
  });
});
