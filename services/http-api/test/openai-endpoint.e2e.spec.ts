import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { FakeOpenAiServer, fakeProviderEnv, startStandaloneProcess, waitFor } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { fetchRetryingShed } from './http-helpers';

const EXAMPLES = resolve(__dirname, '../../../examples');
const KEYS = 'key-of-a=tenant-a,key-of-b=tenant-b';
const INTERNAL_TOKEN = 'a-long-internal-secret-for-the-test';

/** The extension field Trellis adds to a completion's message and to the last chunk's delta. */
type Cited = { citations?: Array<{ index: number; documentId: string; sourceUri: string; snippet: string }> };

async function indexExamples(server: StandaloneProcess, apiKey: string, kb: string): Promise<void> {
  const client = new TrellisClient({ address: server.grpcAddress, apiKey });
  try {
    await client.createKnowledgeBase({ name: kb });
    const ids: string[] = [];
    for (const name of readdirSync(EXAMPLES).sort()) {
      ids.push((await client.uploadDocument({ knowledgeBase: kb, filename: name, sourceUri: `examples/${name}` }, readFileSync(join(EXAMPLES, name)))).id);
    }
    await waitFor(
      async () => (await client.listDocuments(kb)).documents.every((d) => d.status === 'INDEX_STATUS_GRAPHED') || undefined,
      90_000,
      'the examples to be indexed',
    );
  } finally {
    client.close();
  }
}

/** OpenAI's own SDK as the caller, against a real standalone server (built output). */
describe('OpenAI-compatible endpoint, extractive answers (no language model)', () => {
  let server: StandaloneProcess;
  let openai: OpenAI;

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: KEYS, TRELLIS_INTERNAL_TOKEN: INTERNAL_TOKEN, TRELLIS_EMBEDDINGS: 'hash' } });
    await indexExamples(server, 'key-of-a', 'curie');
    await indexExamples(server, 'key-of-b', 'other-tenant');
    // The SDK sends a shed request again after its Retry-After, as it does against OpenAI.
    openai = new OpenAI({ baseURL: `${server.httpUrl}/v1`, apiKey: 'key-of-a', maxRetries: 5 });
  }, 180_000);

  afterAll(async () => {
    await server?.dispose();
  });

  it('lists one model per knowledge base the key can see', async () => {
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models.map((m) => [m.id, m.object, m.owned_by])).toEqual([['curie', 'model', 'trellis']]);
    expect((await openai.models.retrieve('curie')).id).toBe('curie');
  });

  it('answers a completion with [n] markers and the citations they refer to', async () => {
    const completion = await openai.chat.completions.create({
      model: 'curie',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'Who discovered polonium?' },
      ],
    });
    const message = completion.choices[0]!.message as typeof completion.choices[0]['message'] & Cited;
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]!.finish_reason).toBe('stop');
    expect(message.content).toMatch(/polonium/i);
    const markers = [...message.content!.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
    expect(markers.length).toBeGreaterThan(0);
    for (const n of markers) expect(message.citations!.map((c) => c.index)).toContain(n);
    expect(message.citations!.every((c) => c.sourceUri.startsWith('examples/') && c.snippet.length > 0)).toBe(true);
  });

  it('streams chunks in OpenAI\'s format, the last with finish_reason and citations, then [DONE]', async () => {
    const stream = await openai.chat.completions.create({ model: 'curie', stream: true, messages: [{ role: 'user', content: 'Who discovered polonium?' }] });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'curie')).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(chunks.length).toBeGreaterThan(5);
    expect(text).toMatch(/polonium[\s\S]*\[\d\]/i);
    const last = chunks.at(-1)!.choices[0]!;
    expect(last.finish_reason).toBe('stop');
    expect((last.delta as Cited).citations!.length).toBeGreaterThan(0);
    // The SDK ends the stream only on `data: [DONE]`; the raw body ends with it too.
    const raw = await fetchRetryingShed(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-of-a', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'curie', stream: true, messages: [{ role: 'user', content: 'Who discovered polonium?' }] }),
    });
    expect((await raw.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('answers errors in OpenAI\'s shape with the REST API\'s status codes', async () => {
    const wrongKey = new OpenAI({ baseURL: `${server.httpUrl}/v1`, apiKey: 'wrong', maxRetries: 5 });
    const unauthenticated = await wrongKey.models.list().then(() => undefined, (error: unknown) => error);
    expect(unauthenticated).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(unauthenticated).toMatchObject({ status: 401, error: { message: 'a valid API key is required', type: 'authentication_error' } });

    // Another tenant's knowledge base is no model of this key.
    const missing = await openai.chat.completions.create({ model: 'other-tenant', messages: [{ role: 'user', content: 'Who?' }] }).then(() => undefined, (e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ status: 404, error: { type: 'not_found_error', code: 'not_found' } });

    const noQuestion = await openai.chat.completions.create({ model: 'curie', messages: [{ role: 'assistant', content: 'Hello' }] }).then(() => undefined, (e: unknown) => e);
    expect(noQuestion).toBeInstanceOf(OpenAI.BadRequestError);
    expect(noQuestion).toMatchObject({ status: 400, error: { param: 'messages', type: 'invalid_request_error' } });

    const streamed = await openai.chat.completions.create({ model: 'nope', stream: true, messages: [{ role: 'user', content: 'Who?' }] }).then(() => undefined, (e: unknown) => e);
    expect(streamed).toBeInstanceOf(OpenAI.NotFoundError);

    const badName = await fetchRetryingShed(`${server.httpUrl}/v1/models/%E0%A4%A`, { headers: { authorization: 'Bearer key-of-a' } });
    expect(badName.status).toBe(400);
    expect((await openai.models.retrieve('nope').then(() => undefined, (e: unknown) => e)) as object).toBeInstanceOf(OpenAI.NotFoundError);

    const malformed = await fetchRetryingShed(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer key-of-a', 'content-type': 'application/json' }, body: '{"model":' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
  });
});

describe('OpenAI-compatible endpoint over a language model', () => {
  const fake = new FakeOpenAiServer(64);
  let server: StandaloneProcess;

  beforeAll(async () => {
    const baseUrl = await fake.start();
    fake.respondWith((request) => {
      if (request.response_format) return { kind: 'content', content: JSON.stringify({ entities: [], relationships: [] }) };
      return { kind: 'content', content: 'Marie and Pierre Curie discovered polonium in 1898 [1].' };
    });
    server = await startStandaloneProcess({ env: fakeProviderEnv(baseUrl, 64) });
    await indexExamples(server, '', 'curie');
  }, 180_000);

  afterAll(async () => {
    await server?.dispose();
    await fake.stop();
  });

  it('sends the earlier turns as history and returns the model\'s cited answer, streamed and not', async () => {
    const openai = new OpenAI({ baseURL: `${server.httpUrl}/v1`, apiKey: 'unused-without-keys', maxRetries: 5 });
    const messages = [
      { role: 'user' as const, content: 'Tell me about the Curies.' },
      { role: 'assistant' as const, content: 'They were physicists.' },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'Who discovered polonium?' }] },
    ];
    const before = fake.chatRequests().length;
    const completion = await openai.chat.completions.create({ model: 'curie', messages });
    expect(completion.choices[0]!.message.content).toBe('Marie and Pierre Curie discovered polonium in 1898 [1].');
    expect((completion.choices[0]!.message as Cited).citations![0]!.index).toBe(1);
    const sent = fake.chatRequests().slice(before).map((r) => JSON.stringify(r.body['messages']));
    expect(sent.some((m) => m.includes('They were physicists.') && m.includes('Who discovered polonium?'))).toBe(true);

    const stream = await openai.chat.completions.create({ model: 'curie', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Marie and Pierre Curie discovered polonium in 1898 [1].');
  });
});
