import { describe, expect, it } from 'vitest';
import { LevelLimiter, visitBottomUp } from './report-schedule';

/** A promise settled from outside the test's calls. */
function gate(): { open: () => void; opened: Promise<void> } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('visitBottomUp', () => {
  // Two branches: a0, a1 under a; b0, b1 under b; a and b under top.
  const nodes = [
    { id: 'a0', level: 0, childIds: [] },
    { id: 'a1', level: 0, childIds: [] },
    { id: 'b0', level: 0, childIds: [] },
    { id: 'b1', level: 0, childIds: [] },
    { id: 'a', level: 1, childIds: ['a0', 'a1'] },
    { id: 'b', level: 1, childIds: ['b0', 'b1'] },
    { id: 'top', level: 2, childIds: ['a', 'b'] },
  ];

  it("visits a parent once its own children are done, while the other branch's leaf is still out", async () => {
    const slow = gate();
    const events: string[] = [];
    const visiting = visitBottomUp(nodes, async (node, children: string[]) => {
      events.push(`start ${node.id}`);
      if (node.id === 'a0') await slow.opened;
      events.push(`end ${node.id}`);
      return `${node.id}(${children.join(',')})`;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    // Level by level, b would wait for a0 (same level as b's children) to finish.
    expect(events).toContain('end b');
    expect(events).not.toContain('end a0');
    expect(events).not.toContain('start a');
    slow.open();
    const results = await visiting;
    expect(events.indexOf('start a')).toBeGreaterThan(events.indexOf('end a1'));
    expect(events.indexOf('start top')).toBeGreaterThan(events.indexOf('end a'));
    // Children's results arrive in childIds order, whatever order they finished in.
    expect(results.get('top')).toBe('top(a(a0(),a1()),b(b0(),b1()))');
  });

  it('visits each node once, even when it is reached from several places', async () => {
    const visits = new Map<string, number>();
    await visitBottomUp(nodes, (node) => void visits.set(node.id, (visits.get(node.id) ?? 0) + 1));
    expect([...visits.values()]).toEqual(nodes.map(() => 1));
  });
});

describe('LevelLimiter', () => {
  it('runs at most its concurrency at once, and a waiting higher level first', async () => {
    const limiter = new LevelLimiter(2);
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    let inFlight = 0;
    let most = 0;
    const task = (name: string, level: number) => {
      gates.set(name, gate());
      return limiter.run(level, async () => {
        started.push(name);
        most = Math.max(most, ++inFlight);
        await gates.get(name)!.opened;
        inFlight--;
        return name;
      });
    };
    const all = Promise.all([task('leaf1', 0), task('leaf2', 0), task('leaf3', 0), task('leaf4', 0), task('parent', 1)]);
    await Promise.resolve();
    expect(started).toEqual(['leaf1', 'leaf2']);
    gates.get('leaf1')!.open();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The parent asked after leaf3 and leaf4, and starts before them.
    expect(started).toEqual(['leaf1', 'leaf2', 'parent']);
    for (const g of gates.values()) g.open();
    expect(await all).toEqual(['leaf1', 'leaf2', 'leaf3', 'leaf4', 'parent']);
    expect(started).toEqual(['leaf1', 'leaf2', 'parent', 'leaf3', 'leaf4']);
    expect(most).toBe(2);
  });
});
