import type { v1 } from '@trellis/contracts';

/** A call's result or its error, for reporting each in turn. */
export type Outcome<R = v1.Document> = { document: R } | { error: unknown };

export function settle<R>(call: Promise<R>): Promise<Outcome<R>> {
  return call.then(
    (document) => ({ document }),
    (error: unknown) => ({ error }),
  );
}

/** Runs `work` over `items`, at most `limit` at once, and hands each outcome to `done` in the items' order. */
export async function inOrder<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>, done: (item: T, outcome: Outcome<R>) => void): Promise<void> {
  const running: Array<Promise<Outcome<R>>> = [];
  let next = 0;
  const startNext = () => {
    if (next < items.length) running.push(settle(work(items[next++]!)));
  };
  while (running.length < limit && next < items.length) startNext();
  for (const item of items) {
    const outcome = await running.shift()!;
    startNext();
    done(item, outcome);
  }
}
