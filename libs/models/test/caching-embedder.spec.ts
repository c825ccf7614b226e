import { describe, expect, it } from 'vitest';
import { CachingEmbedder } from '../src';
import type { EmbeddingProvider } from '../src';

/** An embedder whose calls finish when the test says so; each vector holds its text's length. */
function heldEmbedder() {
  const held: Array<() => void> = [];
  let calls = 0;
  const inner: EmbeddingProvider = {
    model: 'held',
    dimensions: 1,
    embed: (texts) => {
      calls += texts.length;
      return new Promise((resolve) => held.push(() => resolve(texts.map((t) => Float32Array.of(t.length)))));
    },
  };
  return { inner, held, calls: () => calls };
}

describe('CachingEmbedder', () => {
  it('embeds a text once, however often and in however many calls it comes', async () => {
    const { inner, held, calls } = heldEmbedder();
    const caching = new CachingEmbedder(inner);
    const first = caching.embed(['alpha', 'beta', 'alpha']);
    held.shift()!();
    const [a, b, a2] = await first;
    expect(a2).toBe(a);
    const second = caching.embed(['beta', 'gamma']);
    held.shift()!();
    const [b2, g] = await second;
    expect(b2).toBe(b);
    expect(Array.from(g!)).toEqual([5]);
    expect(calls()).toBe(3);
    expect([caching.hits, caching.misses]).toEqual([2, 3]);
  });

  it('returns the vectors it had cached when calls that ran while it waited evicted them', async () => {
    // A full cache and concurrent chunk writes: the first call finds 'a' cached and waits
    // for the model to embed 'new'; meanwhile another call's texts push 'a' out of the cache.
    const { inner, held } = heldEmbedder();
    const caching = new CachingEmbedder(inner, 2 * Float32Array.BYTES_PER_ELEMENT);
    const warm = caching.embed(['a', 'bb']);
    held.shift()!();
    await warm;
    const waiting = caching.embed(['a', 'new']);
    const evicting = caching.embed(['ccc', 'dddd']);
    held[1]!();
    await evicting;
    held[0]!();
    const vectors = await waiting;
    expect(vectors.map((v) => Array.from(v))).toEqual([[1], [3]]);
  });

  it('holds vectors up to its byte bound, the least recently used going first', async () => {
    let calls = 0;
    const inner: EmbeddingProvider = {
      model: 'four',
      dimensions: 4,
      embed: async (texts) => {
        calls += texts.length;
        return texts.map(() => new Float32Array(4));
      },
    };
    const caching = new CachingEmbedder(inner, 3 * 4 * Float32Array.BYTES_PER_ELEMENT);
    await caching.embed(['a', 'b', 'c']);
    await caching.embed(['a']);
    await caching.embed(['d']);
    expect(calls).toBe(4);
    await caching.embed(['a', 'c', 'd']);
    expect(calls).toBe(4);
    await caching.embed(['b']);
    expect(calls).toBe(5);
  });
});
