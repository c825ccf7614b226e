export interface WeightedEdge {
  readonly source: string;
  readonly target: string;
  /** Transition weight; edges with weight ≤ 0 are ignored. */
  readonly weight: number;
}

export interface PageRankOptions {
  /** Probability of following an edge rather than jumping back to the seeds (HippoRAG uses 0.5). */
  readonly damping: number;
  readonly maxIterations: number;
  /** Stop when the L1 change of one iteration falls below this. */
  readonly tolerance: number;
}

export const DEFAULT_PAGERANK_OPTIONS: PageRankOptions = { damping: 0.5, maxIterations: 50, tolerance: 1e-6 };

/**
 * Personalized PageRank by power iteration over an undirected weighted graph: a random walker
 * follows edges in proportion to their weight and, with probability 1 − damping (and always
 * from a node with no edges), jumps back to a seed chosen by the seed weights. The result is
 * the walker's stationary distribution (sums to 1); nodes it never reaches are absent.
 */
export function personalizedPageRank(edges: readonly WeightedEdge[], seeds: ReadonlyMap<string, number>, options: PageRankOptions = DEFAULT_PAGERANK_OPTIONS): Map<string, number> {
  const seedTotal = [...seeds.values()].reduce((sum, w) => sum + Math.max(0, w), 0);
  if (seedTotal <= 0) return new Map();
  const reset = new Map<string, number>();
  for (const [id, w] of seeds) if (w > 0) reset.set(id, w / seedTotal);

  const neighbours = new Map<string, Array<{ id: string; weight: number }>>();
  const link = (from: string, to: string, weight: number) => {
    const list = neighbours.get(from) ?? [];
    list.push({ id: to, weight });
    neighbours.set(from, list);
  };
  for (const e of edges) {
    if (!(e.weight > 0) || e.source === e.target) continue;
    link(e.source, e.target, e.weight);
    link(e.target, e.source, e.weight);
  }
  const strength = new Map([...neighbours].map(([id, list]) => [id, list.reduce((sum, n) => sum + n.weight, 0)]));

  let rank = new Map(reset);
  for (let i = 0; i < options.maxIterations; i++) {
    const next = new Map<string, number>();
    let dangling = 0;
    for (const [id, mass] of rank) {
      const list = neighbours.get(id);
      if (!list) {
        dangling += mass;
        continue;
      }
      const total = strength.get(id)!;
      for (const n of list) next.set(n.id, (next.get(n.id) ?? 0) + (options.damping * mass * n.weight) / total);
      dangling += (1 - options.damping) * mass;
    }
    for (const [id, share] of reset) next.set(id, (next.get(id) ?? 0) + dangling * share);
    let change = 0;
    for (const [id, value] of next) change += Math.abs(value - (rank.get(id) ?? 0));
    for (const [id, value] of rank) if (!next.has(id)) change += value;
    rank = next;
    if (change < options.tolerance) break;
  }
  return rank;
}
