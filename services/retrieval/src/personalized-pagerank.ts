export interface PageRankOptions {
  /** Probability of following an edge rather than jumping back to the seeds (HippoRAG uses 0.5). */
  readonly damping: number;
  readonly maxIterations: number;
  /** Stop when the L1 change of one iteration falls below this. */
  readonly tolerance: number;
}

export const DEFAULT_PAGERANK_OPTIONS: PageRankOptions = { damping: 0.5, maxIterations: 50, tolerance: 1e-6 };

/**
 * An undirected weighted graph, built edge by edge, whose nodes are ids of a few kinds (entities
 * and passages): each id is numbered once, where it first appears, and edges are kept as pairs
 * of numbers, so a walk over tens of thousands of links makes no string or object per link.
 * Edges of weight ≤ 0 and loops are left out.
 */
export class WalkGraph {
  private readonly numbers: Array<Map<string, number>>;
  /** Node i is ids[i] of kind kinds[i]. */
  readonly ids: string[] = [];
  readonly kinds: number[] = [];
  private readonly ends: number[] = [];
  private readonly weights: number[] = [];

  constructor(kindCount = 1) {
    this.numbers = Array.from({ length: kindCount }, () => new Map<string, number>());
  }

  link(sourceKind: number, source: string, targetKind: number, target: string, weight: number): void {
    if (!(weight > 0) || (sourceKind === targetKind && source === target)) return;
    this.ends.push(this.node(sourceKind, source), this.node(targetKind, target));
    this.weights.push(weight);
  }

  /** The node's number, numbering it now if it is new. */
  node(kind: number, id: string): number {
    const numbers = this.numbers[kind]!;
    let i = numbers.get(id);
    if (i === undefined) {
      i = this.ids.length;
      numbers.set(id, i);
      this.ids.push(id);
      this.kinds.push(kind);
    }
    return i;
  }

  /** Compressed adjacency, both directions. */
  adjacency(): CompactGraph {
    const n = this.ids.length;
    const edgeCount = this.weights.length;
    const offsets = new Int32Array(n + 1);
    for (const end of this.ends) offsets[end + 1]!++;
    for (let i = 0; i < n; i++) offsets[i + 1]! += offsets[i]!;
    const fill = offsets.slice(0, n);
    const neighbours = new Int32Array(2 * edgeCount);
    const weights = new Float64Array(2 * edgeCount);
    const strength = new Float64Array(n);
    for (let e = 0; e < edgeCount; e++) {
      const a = this.ends[2 * e]!;
      const b = this.ends[2 * e + 1]!;
      const weight = this.weights[e]!;
      neighbours[fill[a]!] = b;
      weights[fill[a]!++] = weight;
      neighbours[fill[b]!] = a;
      weights[fill[b]!++] = weight;
      strength[a]! += weight;
      strength[b]! += weight;
    }
    return { offsets, neighbours, weights, strength };
  }
}

/** A seed of the walk: a node (numbered if new) and its restart weight. */
export interface WalkSeed {
  readonly kind: number;
  readonly id: string;
  readonly weight: number;
}

/**
 * Personalized PageRank by power iteration over an undirected weighted graph: a random walker
 * follows edges in proportion to their weight and, with probability 1 − damping (and always
 * from a node with no edges), jumps back to a seed chosen by the seed weights. The result is
 * the walker's stationary distribution (sums to 1) over the nodes it reaches, in node order;
 * nodes it never reaches are absent.
 */
export function walk(graph: WalkGraph, seeds: readonly WalkSeed[], options: PageRankOptions = DEFAULT_PAGERANK_OPTIONS): Array<{ readonly kind: number; readonly id: string; readonly value: number }> {
  const seedTotal = seeds.reduce((sum, s) => sum + Math.max(0, s.weight), 0);
  if (seedTotal <= 0) return [];
  const seedNodes = seeds.map((s) => graph.node(s.kind, s.id));
  const { offsets, neighbours, weights, strength } = graph.adjacency();
  const n = graph.ids.length;
  const reset = new Float64Array(n);
  seeds.forEach((s, i) => {
    if (s.weight > 0) reset[seedNodes[i]!] = s.weight / seedTotal;
  });

  let rank = Float64Array.from(reset);
  let next = new Float64Array(n);
  const reached = new Uint8Array(n);
  for (let i = 0; i < n; i++) if (reset[i]! > 0) reached[i] = 1;
  for (let iteration = 0; iteration < options.maxIterations; iteration++) {
    next.fill(0);
    let jump = 0;
    for (let i = 0; i < n; i++) {
      const mass = rank[i]!;
      if (mass === 0) continue;
      if (strength[i] === 0) {
        jump += mass;
        continue;
      }
      const share = (options.damping * mass) / strength[i]!;
      for (let j = offsets[i]!; j < offsets[i + 1]!; j++) {
        const to = neighbours[j]!;
        next[to] = next[to]! + share * weights[j]!;
        reached[to] = 1;
      }
      jump += (1 - options.damping) * mass;
    }
    let change = 0;
    for (let i = 0; i < n; i++) {
      next[i] = next[i]! + jump * reset[i]!;
      change += Math.abs(next[i]! - rank[i]!);
    }
    [rank, next] = [next, rank];
    if (change < options.tolerance) break;
  }
  const result: Array<{ kind: number; id: string; value: number }> = [];
  for (let i = 0; i < n; i++) if (reached[i]) result.push({ kind: graph.kinds[i]!, id: graph.ids[i]!, value: rank[i]! });
  return result;
}

/** Node i's neighbours are neighbours[offsets[i]] .. neighbours[offsets[i + 1] - 1]. */
interface CompactGraph {
  readonly offsets: Int32Array;
  readonly neighbours: Int32Array;
  readonly weights: Float64Array;
  /** Sum of the weights of each node's edges. */
  readonly strength: Float64Array;
}
