import Graph from 'graphology';
import louvain from 'graphology-communities-louvain';

/** An undirected weighted edge between two nodes of a partition. */
export interface WeightedEdge {
  readonly source: string;
  readonly target: string;
  readonly weight: number;
}

/** One seed for every run: the same graph always gives the same communities. */
const SEED = 0x7e11;

/** A small deterministic PRNG (mulberry32): Louvain's node order is its only randomness. */
export function seededRandom(seed = SEED): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Louvain communities of `nodes` over `edges` (weights respected; edges with a weight that is
 * not positive, self-loops and edges leaving `nodes` are ignored; parallel edges add up).
 * Resolves to groups of node ids, each sorted, in the order of their smallest member. A lower
 * `resolution` favours larger communities (1 is plain modularity).
 * Deterministic: nodes and edges enter the graph sorted, and the RNG is seeded.
 */
export function louvainGroups(nodes: Iterable<string>, edges: Iterable<WeightedEdge>, resolution = 1): string[][] {
  const graph = new Graph({ type: 'undirected', multi: false, allowSelfLoops: false });
  const sorted = [...new Set(nodes)].sort();
  for (const node of sorted) graph.addNode(node);
  const weights = new Map<string, { source: string; target: string; weight: number }>();
  for (const e of edges) {
    if (!(e.weight > 0) || e.source === e.target || !graph.hasNode(e.source) || !graph.hasNode(e.target)) continue;
    const [source, target] = e.source < e.target ? [e.source, e.target] : [e.target, e.source];
    const key = `${source}\u0000${target}`;
    const existing = weights.get(key);
    if (existing) existing.weight += e.weight;
    else weights.set(key, { source, target, weight: e.weight });
  }
  for (const key of [...weights.keys()].sort()) {
    const e = weights.get(key)!;
    graph.addEdge(e.source, e.target, { weight: e.weight });
  }
  if (graph.size === 0) return sorted.map((node) => [node]);
  const assignment = louvain(graph, { getEdgeWeight: 'weight', rng: seededRandom(), resolution });
  const groups = new Map<number, string[]>();
  for (const node of sorted) {
    const community = assignment[node]!;
    const group = groups.get(community);
    if (group) group.push(node);
    else groups.set(community, [node]);
  }
  return [...groups.values()].sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
}
