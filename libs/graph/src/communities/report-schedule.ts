/** A node of the hierarchy as the schedule sees it: what it waits for, and its level. */
export interface ScheduledNode {
  readonly id: string;
  readonly level: number;
  readonly childIds: readonly string[];
}

/**
 * Visits every node once all of its own children have been visited, and returns each node's
 * result by id. A node starts the moment its last child is done, not when every node of the
 * children's level is: a refresh writes the reports on the path of a change (a few per
 * level) as one chain per branch, instead of a round of calls per level that waits for the
 * slowest call of the level. `visit` receives the children's results in `childIds` order, so
 * a result depends only on the node and its children, never on the order in which the
 * visits ran. Every node's children must be among `nodes`.
 */
export async function visitBottomUp<N extends ScheduledNode, R>(nodes: readonly N[], visit: (node: N, children: R[]) => R | Promise<R>): Promise<Map<string, R>> {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const started = new Map<string, Promise<R>>();
  const resultOf = (node: N): Promise<R> => {
    const known = started.get(node.id);
    if (known !== undefined) return known;
    const result = Promise.all(node.childIds.map((id) => resultOf(byId.get(id)!))).then((children) => visit(node, children));
    started.set(node.id, result);
    return result;
  };
  const results = await Promise.all(nodes.map(resultOf));
  return new Map(nodes.map((n, i) => [n.id, results[i]!]));
}

/**
 * At most `concurrency` tasks at once. When a slot frees, the waiting task of the highest
 * level starts first (equal levels in the order they asked): an ancestor that is ready is on
 * the longest remaining chain of its branch, while a waiting level-0 task has siblings that
 * can still fill the other slots.
 */
export class LevelLimiter {
  private running = 0;
  private readonly waiting: Array<{ level: number; order: number; start: () => void }> = [];
  private asked = 0;

  constructor(private readonly concurrency: number) {}

  async run<T>(level: number, task: () => Promise<T>): Promise<T> {
    if (this.running >= this.concurrency) {
      await new Promise<void>((start) => {
        this.waiting.push({ level, order: this.asked++, start });
      });
    } else this.running++;
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** Hands the slot to the next waiting task (the slot stays taken), or frees it. */
  private release(): void {
    if (this.waiting.length === 0) {
      this.running--;
      return;
    }
    let best = 0;
    for (let i = 1; i < this.waiting.length; i++) {
      const w = this.waiting[i]!;
      const b = this.waiting[best]!;
      if (w.level > b.level || (w.level === b.level && w.order < b.order)) best = i;
    }
    this.waiting.splice(best, 1)[0]!.start();
  }
}
