import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@trellis/config';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { createModels } from '@trellis/models';
import { FakeOpenAiServer, fakeEmbedding, fakeProviderEnv } from '@trellis/testing';

// The embedder a server builds for TRELLIS_EMBEDDINGS=openai, against a real HTTP endpoint:
// what reaches the endpoint when many handlers embed at once.
describe('embedding requests to an OpenAI-compatible endpoint', () => {
  const fake = new FakeOpenAiServer(16);
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await fake.start();
  });

  afterAll(async () => {
    await fake.stop();
  });

  const embedder = async (extra: Record<string, string> = {}) => (await createModels(loadConfig(fakeProviderEnv(baseUrl, 16, extra), 'test'))).embedder;
  const embeddingRequests = () => fake.requests.filter((r) => r.path.endsWith('/embeddings')).map((r) => (r.body.input as string[]).length);
  const expectVectors = (vectors: Float32Array[], texts: string[]) =>
    texts.forEach((text, i) => fakeEmbedding(text, 16).forEach((x, d) => expect(vectors[i]![d]).toBeCloseTo(x, 6)));

  it('sends concurrent callers as one request by default and gives each its own vectors', async () => {
    fake.requests.length = 0;
    const models = await embedder();
    const calls = Array.from({ length: 12 }, (_, i) => [`chunk ${i} text`, `entity ${i}`, `relationship ${i}`]);
    const vectors = await Promise.all(calls.map((texts) => models.embed(texts)));
    calls.forEach((texts, i) => expectVectors(vectors[i]!, texts));
    expect(embeddingRequests()).toEqual([36]);
  });

  it('sends each call as its own request with TRELLIS_EMBEDDING_MAX_CONCURRENCY=0', async () => {
    fake.requests.length = 0;
    const models = await embedder({ TRELLIS_EMBEDDING_MAX_CONCURRENCY: '0' });
    await Promise.all(Array.from({ length: 3 }, (_, i) => models.embed([`text ${i}`, `more ${i}`])));
    expect(embeddingRequests()).toEqual([2, 2, 2]);
  });

  it('keeps to TRELLIS_EMBEDDING_BATCH_SIZE texts per request and TRELLIS_EMBEDDING_MAX_CONCURRENCY requests', async () => {
    fake.requests.length = 0;
    const models = await embedder({ TRELLIS_EMBEDDING_BATCH_SIZE: '4', TRELLIS_EMBEDDING_MAX_CONCURRENCY: '2' });
    const calls = Array.from({ length: 5 }, (_, i) => [`first ${i}`, `second ${i}`]);
    const vectors = await Promise.all(calls.map((texts) => models.embed(texts)));
    calls.forEach((texts, i) => expectVectors(vectors[i]!, texts));
    expect(embeddingRequests()).toEqual([4, 4, 2]);
  });

  it('fails only the caller whose text the endpoint refuses', async () => {
    fake.requests.length = 0;
    fake.maxEmbeddingInputChars = 100;
    try {
      const models = await embedder();
      const [fine, tooLong] = await Promise.allSettled([models.embed(['a short text', 'another']), models.embed(['x'.repeat(101)])]);
      expect(fine.status === 'fulfilled' && fine.value.length).toBe(2);
      if (fine.status === 'fulfilled') expectVectors(fine.value, ['a short text', 'another']);
      expect(tooLong.status === 'rejected' && tooLong.reason instanceof TrellisError && tooLong.reason.code).toBe(ErrorCode.FailedPrecondition);
      expect(tooLong.status === 'rejected' && String(tooLong.reason)).toMatch(/maximum context length/);
      // The shared request, then each caller's texts on their own.
      expect(embeddingRequests()).toEqual([3, 2, 1]);
    } finally {
      fake.maxEmbeddingInputChars = Number.POSITIVE_INFINITY;
    }
  });

  it('refuses vectors that are not all numbers as unavailable, so the work is retried, not stored', async () => {
    fake.garbledEmbeddings = true;
    try {
      const models = await embedder();
      await expect(models.embed(['a text'])).rejects.toMatchObject({ code: ErrorCode.Unavailable, message: expect.stringMatching(/not all numbers/) });
    } finally {
      fake.garbledEmbeddings = false;
    }
    expect((await (await embedder()).embed(['a text']))[0]![0]).toBeTypeOf('number');
  });
});
