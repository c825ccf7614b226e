import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalExtractor } from './local-extractor';
import { LocalExtractorPool, localExtractionThreads } from './local-extractor-pool';

const TEXTS = [
  'Marie Curie founded the Radium Institute in Paris in 1920. Later, her brother Jozef Sklodowski visited Warsaw.',
  'Christopher Nolan directed The Prestige, based on the novel by Christopher Priest.',
  'The `ThrottlerModule` limits how many requests a client can make. Configure it in `AppModule`.',
  'She was the first woman to do so, a few months later.',
];

describe('LocalExtractorPool', () => {
  let pool: LocalExtractorPool;
  afterEach(async () => pool.close());

  it('extracts in worker threads exactly what LocalExtractor extracts, under its model and rules version', async () => {
    pool = new LocalExtractorPool(2);
    const local = new LocalExtractor();
    expect([pool.model, pool.promptVersion]).toEqual([local.model, local.promptVersion]);
    // Many at once, spread over both threads; each answer belongs to its own chunk.
    const texts = [...TEXTS, ...TEXTS, ...TEXTS];
    const results = await Promise.all(texts.map((t) => pool.extract(t)));
    for (const [i, text] of texts.entries()) expect(results[i]).toEqual(await local.extract(text));
    expect(results[0]!.entities.map((e) => e.name)).toContain('Marie Curie');
  });

  it('replaces a thread that died: the chunks it held fail, the next ones are extracted', async () => {
    pool = new LocalExtractorPool(1);
    await pool.extract(TEXTS[0]!);
    const thread = (pool as unknown as { threads: Array<{ terminate(): Promise<void> }> }).threads[0]!;
    // Long enough to be still in the thread when it dies.
    const held = pool.extract(TEXTS.join(' ').repeat(300));
    await thread.terminate();
    await expect(held).rejects.toThrow(/local extraction thread exited/);
    expect(await pool.extract(TEXTS[1]!)).toEqual(await new LocalExtractor().extract(TEXTS[1]!));
  });

  it('ends a thread left without chunks, and starts one again for the next chunk', async () => {
    const local = new LocalExtractor();
    const expected = await Promise.all(TEXTS.map((t) => local.extract(t)));
    pool = new LocalExtractorPool(1, 2_000);
    await pool.extract(TEXTS[0]!);
    await sleep(1_200);
    // A chunk within the wait starts it again.
    expect(await pool.extract(TEXTS[1]!)).toEqual(expected[1]);
    await sleep(1_200);
    expect(pool.running).toBe(1);
    await vi.waitFor(() => expect(pool.running).toBe(0), { timeout: 3_000 });
    expect(await pool.extract(TEXTS[2]!)).toEqual(expected[2]);
    expect(pool.running).toBe(1);
  });

  it('refuses work once closed', async () => {
    pool = new LocalExtractorPool(1);
    await pool.close();
    await expect(pool.extract(TEXTS[0]!)).rejects.toThrow('the local extractor is closed');
  });

  it('leaves one core to the event loop, and uses at most four threads', () => {
    expect([1, 2, 3, 8, 64].map((cores) => localExtractionThreads(cores))).toEqual([1, 1, 2, 4, 4]);
  });
});
