import { describe, expect, it } from 'vitest';
import { DEFAULT_PAGERANK_OPTIONS, WalkGraph, walk } from './personalized-pagerank';
import type { PageRankOptions } from './personalized-pagerank';
import type { WeightedEdge } from '@trellis/graph';

/** The walk over edges between ids of one kind (weight ≤ 0 ignored), seeded by id → weight. */
function personalizedPageRank(
  edges: readonly WeightedEdge[],
  seeds: ReadonlyMap<string, number>,
  options: PageRankOptions = DEFAULT_PAGERANK_OPTIONS,
): Map<string, number> {
  const graph = new WalkGraph();
  for (const e of edges) graph.link(0, e.source, 0, e.target, e.weight);
  return new Map(walk(graph, [...seeds].map(([id, weight]) => ({ kind: 0, id, weight })), options).map((r) => [r.id, r.value]));
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

describe('walk (personalized PageRank)', () => {
  it('is a distribution concentrated near the seeds', () => {
    // a - b - c - d, seeded at a
    const edges = [
      { source: 'a', target: 'b', weight: 1 },
      { source: 'b', target: 'c', weight: 1 },
      { source: 'c', target: 'd', weight: 1 },
    ];
    const rank = personalizedPageRank(edges, new Map([['a', 1]]));
    expect(sum(rank)).toBeCloseTo(1, 6);
    expect(rank.get('a')!).toBeGreaterThan(rank.get('b')!);
    expect(rank.get('b')!).toBeGreaterThan(rank.get('c')!);
    expect(rank.get('c')!).toBeGreaterThan(rank.get('d')!);
  });

  it('favours the node two seeds share (the bridge of a multi-hop question)', () => {
    const edges = [
      { source: 'film', target: 'director', weight: 1 },
      { source: 'town', target: 'director', weight: 1 },
      { source: 'film', target: 'actor', weight: 1 },
      { source: 'town', target: 'river', weight: 1 },
    ];
    const rank = personalizedPageRank(edges, new Map([['film', 1], ['town', 1]]));
    expect(rank.get('director')!).toBeGreaterThan(rank.get('actor')!);
    expect(rank.get('director')!).toBeGreaterThan(rank.get('river')!);
  });

  it('follows heavier edges more often and ignores non-positive ones', () => {
    const edges = [
      { source: 's', target: 'heavy', weight: 3 },
      { source: 's', target: 'light', weight: 1 },
      { source: 's', target: 'never', weight: 0 },
      { source: 's', target: 'negative', weight: -2 },
    ];
    const rank = personalizedPageRank(edges, new Map([['s', 1]]));
    expect(rank.get('heavy')! / rank.get('light')!).toBeCloseTo(3, 6);
    expect(rank.has('never')).toBe(false);
    expect(rank.has('negative')).toBe(false);
  });

  it('matches the closed form on two nodes', () => {
    // r_s = (1-d) + d r_t, r_t = d r_s  =>  r_s = (1-d) / (1-d^2) = 1/(1+d)
    const d = 0.5;
    const rank = personalizedPageRank([{ source: 's', target: 't', weight: 1 }], new Map([['s', 1]]), { damping: d, maxIterations: 200, tolerance: 1e-12 });
    expect(rank.get('s')).toBeCloseTo(1 / (1 + d), 8);
    expect(rank.get('t')).toBeCloseTo(d / (1 + d), 8);
  });

  it('returns the seeds alone when they have no edges, and nothing without seeds', () => {
    const rank = personalizedPageRank([], new Map([['x', 2], ['y', 2]]));
    expect(rank.get('x')).toBeCloseTo(0.5, 9);
    expect(rank.get('y')).toBeCloseTo(0.5, 9);
    expect(personalizedPageRank([{ source: 'a', target: 'b', weight: 1 }], new Map()).size).toBe(0);
  });
});
