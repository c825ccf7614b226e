import { describe, expect, it } from 'vitest';
import { CorePacer } from './core-pacer';

describe('CorePacer', () => {
  it('forwards the next call only once the core has started the one before', () => {
    let running = 0;
    const pacer = new CorePacer(() => running, 1);
    const forwarded: string[] = [];
    const ends: Array<() => void> = [];
    const submit = (name: string) =>
      pacer.submit(
        Infinity,
        (ended) => {
          forwarded.push(name);
          ends.push(ended);
        },
        () => forwarded.push(`${name} expired`),
      );
    submit('a');
    submit('b');
    expect(forwarded).toEqual(['a']);
    expect(pacer.waitingInCore()).toBe(1);
    // The core reads a and runs it (synchronous work, or awaiting a model): b may go.
    running = 1;
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(forwarded).toEqual(['a', 'b']);
        running = 2;
        // Calls that have started do not hold the next back: a third goes at once.
        submit('c');
        expect(forwarded).toEqual(['a', 'b', 'c']);
        ends.forEach((end) => end());
        running = 0;
        expect(pacer.waitingInCore()).toBe(0);
        resolve();
      }, 10),
    );
  });

  it('expires a call that could not be forwarded by its time, and forgets a cancelled one', async () => {
    const pacer = new CorePacer(() => 0, 1);
    const outcomes: string[] = [];
    pacer.submit(Infinity, () => outcomes.push('first forwarded'), () => outcomes.push('first expired'));
    pacer.submit(performance.now() + 20, () => outcomes.push('second forwarded'), () => outcomes.push('second expired'));
    const cancel = pacer.submit(performance.now() + 20, () => outcomes.push('third forwarded'), () => outcomes.push('third expired'));
    cancel();
    await new Promise((r) => setTimeout(r, 60));
    expect(outcomes).toEqual(['first forwarded', 'second expired']);
  });
});

describe('CorePacer pace', () => {
  it('expires an arriving call at once when the calls ahead of it cannot be forwarded by its time at the pace the core has kept', () => {
    let now = 0;
    let running = 0;
    const pacer = new CorePacer(() => running, 1, () => now);
    const outcomes: string[] = [];
    const submit = (name: string, waitMs: number) =>
      pacer.submit(now + waitMs, () => outcomes.push(`${name} forwarded`), () => outcomes.push(`${name} expired at ${now}`));
    submit('a', 50);
    submit('b', 50);
    submit('c', 50);
    // The core starts a call every 30 ms: b goes at 30, c at 60 (past its 50 ms, so it is expired).
    for (const at of [30, 60]) {
      now = at;
      running += 1;
      (pacer as unknown as { pump(): void }).pump();
    }
    expect(outcomes).toEqual(['a forwarded', 'b forwarded', 'c expired at 60']);
    // d goes straight to the idle core, e waits behind it. The pace is 30 ms: with e waiting, a
    // newcomer allowed 20 ms would wait ~30 and is refused as it arrives; one allowed 100 ms waits.
    submit('d', 100);
    submit('e', 100);
    submit('f', 20);
    submit('g', 100);
    expect(outcomes.slice(3)).toEqual(['d forwarded', 'f expired at 60']);
  });
});
