import { describe, expect, it } from 'vitest';
import { CachedReading } from './cached-reading';

/** A source whose reads resolve or fail only when the test says so. */
class ControlledSource {
  calls = 0;
  private pending: Array<{ resolve: (n: number) => void; reject: (e: Error) => void }> = [];

  read = (): Promise<number> => {
    this.calls++;
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  };

  answer(value: number): void {
    this.pending.shift()!.resolve(value);
  }

  fail(message: string): void {
    this.pending.shift()!.reject(new Error(message));
  }
}

describe('CachedReading', () => {
  it('asks the source once per maxAge, however often it is read', async () => {
    let calls = 0;
    const reading = new CachedReading(async () => ++calls, { maxAgeMs: 60_000, waitMs: 1_000, onError: () => undefined });
    expect(await reading.get()).toBe(1);
    expect(await reading.get()).toBe(1);
    expect(await reading.get()).toBe(1);
    expect(calls).toBe(1);
  });

  it('asks again once the reading is older than maxAge', async () => {
    let calls = 0;
    const reading = new CachedReading(async () => ++calls, { maxAgeMs: 0, waitMs: 1_000, onError: () => undefined });
    expect(await reading.get()).toBe(1);
    expect(await reading.get()).toBe(2);
  });

  it('does not wait for a hung source beyond waitMs, keeps one read in flight, and answers with the last reading', async () => {
    const source = new ControlledSource();
    const reading = new CachedReading(source.read, { maxAgeMs: 0, waitMs: 5, onError: () => undefined });
    const first = reading.get();
    source.answer(7);
    expect(await first).toBe(7);
    // The source hangs now: callers get the previous reading, and no second read is started.
    expect(await reading.get()).toBe(7);
    expect(await reading.get()).toBe(7);
    expect(source.calls).toBe(2);
    // The hung read lands in the background and is what the next caller sees.
    source.answer(9);
    await new Promise((r) => setImmediate(r));
    expect(await reading.get()).toBe(9);
    expect(source.calls).toBe(3);
  });

  it('reports a failed read and is empty until a read succeeds, without asking the source again within maxAge', async () => {
    const errors: string[] = [];
    const source = new ControlledSource();
    const reading = new CachedReading(source.read, { maxAgeMs: 60_000, waitMs: 1_000, onError: (e) => errors.push((e as Error).message) });
    const first = reading.get();
    source.fail('broker down');
    expect(await first).toBeUndefined();
    expect(errors).toEqual(['broker down']);
    expect(await reading.get()).toBeUndefined();
    expect(source.calls).toBe(1);
  });
});
