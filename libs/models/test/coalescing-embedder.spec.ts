import { describe, expect, it } from 'vitest';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { CoalescingEmbedder } from '../src';
import type { EmbeddingProvider } from '../src';

/**
 * An embedder that records each request and answers it when the test says so; a vector holds
 * its text's length, and a text starting with "bad" or "down" makes the request fail.
 */
function recordingEmbedder() {
  const requests: string[][] = [];
  const pending: Array<() => void> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const inner: EmbeddingProvider = {
    model: 'recording',
    dimensions: 1,
    embed: (texts) => {
      requests.push([...texts]);
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      return new Promise((resolve, reject) =>
        pending.push(() => {
          inFlight--;
          if (texts.some((t) => t.startsWith('bad'))) reject(new TrellisError(ErrorCode.FailedPrecondition, 'model provider rejected the request (400): input too long'));
          else if (texts.some((t) => t.startsWith('down'))) reject(new TrellisError(ErrorCode.Unavailable, 'model provider unavailable (503)'));
          else resolve(texts.map((t) => Float32Array.of(t.length)));
        }),
      );
    },
  };
  /** Answers every request in flight, and those they lead to, until none is left. */
  const answerAll = async () => {
    for (let turns = 0; turns < 100; turns++) {
      await new Promise((r) => setImmediate(r));
      if (pending.length === 0) return;
      pending.splice(0).forEach((answer) => answer());
    }
  };
  return { inner, requests, answerAll, maxInFlight: () => maxInFlight };
}

const lengths = (vectors: Float32Array[]) => vectors.map((v) => v[0]);

describe('CoalescingEmbedder', () => {
  it('sends the callers of one turn of the event loop as one request, and gives each caller its own vectors in order', async () => {
    const model = recordingEmbedder();
    const embedder = new CoalescingEmbedder(model.inner, { maxTexts: 64, maxInFlight: 8 });
    const calls = [['a', 'bb'], ['ccc'], ['dddd', 'a', 'eeeee']].map((texts) => embedder.embed(texts));
    await model.answerAll();
    expect((await Promise.all(calls)).map(lengths)).toEqual([[1, 2], [3], [4, 1, 5]]);
    // 'a' was asked for twice and sent once.
    expect(model.requests).toEqual([['a', 'bb', 'ccc', 'dddd', 'eeeee']]);
  });

  it('runs at most maxInFlight requests of at most maxTexts texts, and packs the callers that wait', async () => {
    const model = recordingEmbedder();
    const embedder = new CoalescingEmbedder(model.inner, { maxTexts: 4, maxInFlight: 2 });
    const first = embedder.embed(['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8', 't9', 't10']);
    await new Promise((r) => setImmediate(r));
    expect(model.requests).toEqual([['t1', 't2', 't3', 't4'], ['t5', 't6', 't7', 't8']]);
    // Callers arriving while both requests run wait, and share the next requests.
    const later = Array.from({ length: 5 }, (_, i) => embedder.embed([`later ${i}`]));
    await model.answerAll();
    expect(lengths(await first)).toEqual([2, 2, 2, 2, 2, 2, 2, 2, 2, 3]);
    expect((await Promise.all(later)).map(lengths)).toEqual([[7], [7], [7], [7], [7]]);
    expect(model.requests.slice(2)).toEqual([['t9', 't10', 'later 0', 'later 1'], ['later 2', 'later 3', 'later 4']]);
    expect(model.maxInFlight()).toBe(2);
  });

  it('fails only the caller whose text the model rejects, sending the others again on their own', async () => {
    const model = recordingEmbedder();
    const embedder = new CoalescingEmbedder(model.inner, { maxTexts: 64, maxInFlight: 8 });
    const good = embedder.embed(['fine', 'also fine']);
    const bad = embedder.embed(['bad text']);
    const outcomes = Promise.allSettled([good, bad]);
    await model.answerAll();
    const [goodOutcome, badOutcome] = await outcomes;
    expect(goodOutcome.status === 'fulfilled' && lengths(goodOutcome.value)).toEqual([4, 9]);
    expect(badOutcome.status === 'rejected' && (badOutcome.reason as TrellisError).code).toBe(ErrorCode.FailedPrecondition);
    expect(model.requests).toEqual([['fine', 'also fine', 'bad text'], ['fine', 'also fine'], ['bad text']]);
  });

  it('fails every caller of a request the provider could not serve, and serves the callers after it', async () => {
    const model = recordingEmbedder();
    const embedder = new CoalescingEmbedder(model.inner, { maxTexts: 2, maxInFlight: 1 });
    const first = embedder.embed(['down 1', 'x']);
    const second = embedder.embed(['y', 'z']);
    const outcomes = Promise.allSettled([first, second]);
    await model.answerAll();
    const [firstOutcome, secondOutcome] = await outcomes;
    expect(firstOutcome.status === 'rejected' && (firstOutcome.reason as TrellisError).code).toBe(ErrorCode.Unavailable);
    expect(secondOutcome.status === 'fulfilled' && lengths(secondOutcome.value)).toEqual([1, 1]);
    expect(model.requests).toEqual([['down 1', 'x'], ['y', 'z']]);
  });

  it('drops the rest of a failed caller\'s texts instead of sending them', async () => {
    const model = recordingEmbedder();
    const embedder = new CoalescingEmbedder(model.inner, { maxTexts: 1, maxInFlight: 1 });
    const failing = embedder.embed(['down', 'never sent', 'nor this']).catch((error: unknown) => error);
    const after = embedder.embed(['next']);
    await model.answerAll();
    expect(await failing).toBeInstanceOf(TrellisError);
    expect(lengths(await after)).toEqual([4]);
    expect(model.requests).toEqual([['down'], ['next']]);
  });

  it('refuses a model that answers with fewer vectors than texts', async () => {
    const inner: EmbeddingProvider = { model: 'short', dimensions: 1, embed: async (texts) => texts.slice(1).map(() => Float32Array.of(1)) };
    const embedder = new CoalescingEmbedder(inner, { maxTexts: 8, maxInFlight: 1 });
    await expect(embedder.embed(['a', 'b'])).rejects.toThrow(/returned 1 vectors for 2 texts/);
  });
});
