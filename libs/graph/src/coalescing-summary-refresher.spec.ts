import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { CoalescingSummaryRefresher } from './coalescing-summary-refresher';
import type { SummaryUsage } from './summary-refresher';

/** A refresher whose calls finish when the test says so, recording what each was given. */
function controlledRefresher() {
  const calls: Array<{ scope: KbScope; maxChars: number; finish: (saved: number) => void; fail: (e: Error) => void; onUsage?: (u: SummaryUsage) => void }> = [];
  const refresher = {
    refresh: (scope: KbScope, maxChars: number, onUsage?: (u: SummaryUsage) => void) =>
      new Promise<number>((resolve, reject) => calls.push({ scope, maxChars, finish: resolve, fail: reject, onUsage })),
  };
  return { calls, refresher };
}

const kb: KbScope = { tenantId: 't', kbId: 'kb' };
const other: KbScope = { tenantId: 't', kbId: 'other' };
const tick = () => new Promise((r) => setImmediate(r));

describe('CoalescingSummaryRefresher', () => {
  it('runs one refresh per knowledge base at a time and joins everyone who arrives meanwhile into the next', async () => {
    const { calls, refresher } = controlledRefresher();
    const coalescing = new CoalescingSummaryRefresher(refresher);
    const settled: string[] = [];
    const first = coalescing.refresh(kb, 100).then((n) => settled.push(`first:${n}`));
    const second = coalescing.refresh(kb, 200).then((n) => settled.push(`second:${n}`));
    const third = coalescing.refresh(kb, 300).then((n) => settled.push(`third:${n}`));
    const elsewhere = coalescing.refresh(other, 100);
    expect(calls.map((c) => [c.scope.kbId, c.maxChars])).toEqual([
      ['kb', 100],
      ['other', 100],
    ]);

    calls[0]!.finish(1);
    await tick();
    // The second and third callers wrote before a refresh that had not started: they share it.
    expect(settled).toEqual(['first:1']);
    expect(calls.map((c) => [c.scope.kbId, c.maxChars])).toEqual([
      ['kb', 100],
      ['other', 100],
      ['kb', 300],
    ]);
    calls[2]!.finish(7);
    calls[1]!.finish(2);
    await Promise.all([first, second, third]);
    expect(settled).toEqual(['first:1', 'second:7', 'third:7']);
    expect(await elsewhere).toBe(2);
  });

  it('starts at once when nothing runs, and again for a caller after an idle spell', async () => {
    const { calls, refresher } = controlledRefresher();
    const coalescing = new CoalescingSummaryRefresher(refresher);
    const one = coalescing.refresh(kb, 100);
    calls[0]!.finish(3);
    expect(await one).toBe(3);
    const two = coalescing.refresh(kb, 100);
    expect(calls).toHaveLength(2);
    calls[1]!.finish(4);
    expect(await two).toBe(4);
  });

  it('fails every caller of a failed refresh and keeps serving the next ones', async () => {
    const { calls, refresher } = controlledRefresher();
    const coalescing = new CoalescingSummaryRefresher(refresher);
    const running = coalescing.refresh(kb, 100);
    const joinedA = coalescing.refresh(kb, 100);
    const joinedB = coalescing.refresh(kb, 100);
    calls[0]!.finish(1);
    await running;
    calls[1]!.fail(new Error('embedding model closed'));
    await expect(joinedA).rejects.toThrow('embedding model closed');
    await expect(joinedB).rejects.toThrow('embedding model closed');
    const later = coalescing.refresh(kb, 100);
    calls[2]!.finish(5);
    expect(await later).toBe(5);
  });

  it('charges a shared refresh to the caller that opened it', async () => {
    const { calls, refresher } = controlledRefresher();
    const coalescing = new CoalescingSummaryRefresher(refresher);
    const charged: string[] = [];
    const blocker = coalescing.refresh(kb, 100);
    const opener = coalescing.refresh(kb, 100, () => charged.push('opener'));
    const joiner = coalescing.refresh(kb, 100, () => charged.push('joiner'));
    calls[0]!.finish(0);
    await blocker;
    calls[1]!.onUsage?.({ inputTokens: 10, outputTokens: 2 });
    calls[1]!.finish(1);
    await Promise.all([opener, joiner]);
    expect(charged).toEqual(['opener']);
  });
});
