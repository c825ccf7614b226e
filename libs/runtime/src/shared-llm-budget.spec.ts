import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BudgetedChatModel } from '@trellis/models';
import type { CallPriority, CallRelease, ChatMessage, ChatModel, CompletionOptions } from '@trellis/models';
import { SqliteStore } from '@trellis/storage';
import { SharedLlmBudget } from './shared-llm-budget';

/** Resolves to whether `promise` settled within a few event-loop turns and polls. */
async function settlesSoon(promise: Promise<unknown>, ms = 150): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

describe('SharedLlmBudget over the store', () => {
  let store: SqliteStore;
  let now: number;
  const clock = () => now;

  beforeEach(() => {
    store = new SqliteStore(':memory:');
    now = 1_000_000;
  });
  afterEach(async () => {
    await store.close();
  });

  const budget = (settings: Partial<ConstructorParameters<typeof SharedLlmBudget>[1]>) =>
    new SharedLlmBudget(store.repositories.llmBudget, { maxConcurrency: 0, requestsPerMinute: 0, tokensPerMinute: 0, leaseMs: 60_000, ...settings }, clock);

  it('lets one call at a time through a concurrency limit of one; the next starts when it ends', async () => {
    const limit = budget({ maxConcurrency: 1 });
    const releaseFirst = await limit.acquire('m', 10);
    const second = limit.acquire('m', 10);
    expect(await settlesSoon(second)).toBe(false);
    // Another model has its own slots.
    expect(await settlesSoon(limit.acquire('other', 10))).toBe(true);
    await releaseFirst(undefined);
    const releaseSecond = await second;
    await releaseSecond(undefined);
  });

  it('gives freed slots to the callers of a process in the order they asked, at once', async () => {
    const limit = budget({ maxConcurrency: 1 });
    const order: string[] = [];
    const releaseFirst = await limit.acquire('m', 10);
    // A caller that has waited long enough to back off to polls of a second or more.
    const patient = limit.acquire('m', 10).then((release) => (order.push('patient'), release));
    await new Promise((r) => setTimeout(r, 1_500));
    const later = limit.acquire('m', 10).then((release) => (order.push('later'), release));
    const freedAt = performance.now();
    await releaseFirst(undefined);
    const releasePatient = await patient;
    // Woken by the release, not by its next poll.
    expect(performance.now() - freedAt).toBeLessThan(500);
    expect(order).toEqual(['patient']);
    await releasePatient(undefined);
    await (await later)(undefined);
    expect(order).toEqual(['patient', 'later']);
  });

  it('gives a freed slot to the waiting caller of the highest priority: a question before summaries, summaries before new extraction', async () => {
    const limit = budget({ maxConcurrency: 1 });
    const order: string[] = [];
    const releases: CallRelease[] = [];
    const releaseFirst = await limit.acquire('m', 10, 'bulk');
    const waiting = (name: string, priority: CallPriority) =>
      limit.acquire('m', 10, priority).then((release) => {
        order.push(name);
        releases.push(release);
      });
    const calls = [waiting('extraction 1', 'bulk'), waiting('summary 1', 'follow-up'), waiting('extraction 2', 'bulk'), waiting('question', 'interactive'), waiting('summary 2', 'follow-up')];
    await new Promise((r) => setTimeout(r, 100));
    expect(order).toEqual([]);
    await releaseFirst(undefined);
    for (let i = 0; i < calls.length; i++) {
      while (order.length <= i) await new Promise((r) => setTimeout(r, 5));
      // One slot: nobody else got in.
      expect(order).toHaveLength(i + 1);
      await releases[i]!(undefined);
    }
    await Promise.all(calls);
    expect(order).toEqual(['question', 'summary 1', 'summary 2', 'extraction 1', 'extraction 2']);
  });

  it('queues a chat model call as interactive unless it says otherwise', async () => {
    const asked: CallPriority[] = [];
    const recording = { acquire: async (_model: string, _tokens: number, priority: CallPriority) => (asked.push(priority), async () => undefined) };
    const inner: ChatModel = { model: 'm', complete: async () => 'ok', stream: async function* () {} };
    const model = new BudgetedChatModel(inner, recording);
    await model.complete([{ role: 'user', content: 'hi' }]);
    await model.complete([{ role: 'user', content: 'hi' }], { priority: 'bulk' });
    expect(asked).toEqual(['interactive', 'bulk']);
  });

  it("frees a killed worker's slot when its lease expires", async () => {
    const limit = budget({ maxConcurrency: 1, leaseMs: 5_000 });
    await limit.acquire('m', 10); // never released: the worker died
    const next = limit.acquire('m', 10);
    expect(await settlesSoon(next)).toBe(false);
    now += 5_000;
    await next;
  });

  it('spaces calls by requests per minute, on the shared clock', async () => {
    const limit = budget({ requestsPerMinute: 2 });
    await limit.acquire('m', 1);
    await limit.acquire('m', 1);
    const third = limit.acquire('m', 1);
    expect(await settlesSoon(third)).toBe(false);
    now += 30_000;
    await third;
  });

  it('charges tokens beyond the estimate after the call, delaying the next one', async () => {
    const limit = budget({ tokensPerMinute: 1_000 });
    const release = await limit.acquire('m', 100);
    await release(1_000);
    const next = limit.acquire('m', 100);
    expect(await settlesSoon(next)).toBe(false);
    now += 6_000;
    await next;
  });

  it('wraps a chat model: the slot is freed also when the call fails', async () => {
    const failing: ChatModel = {
      model: 'm',
      complete: async (_m: readonly ChatMessage[], _o?: CompletionOptions) => Promise.reject(new Error('provider down')),
      stream: async function* () {},
    };
    const model = new BudgetedChatModel(failing, budget({ maxConcurrency: 1 }));
    await expect(model.complete([{ role: 'user', content: 'hi' }])).rejects.toThrow('provider down');
    await expect(model.complete([{ role: 'user', content: 'hi' }])).rejects.toThrow('provider down');
  });
});
