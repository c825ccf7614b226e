import { describe, expect, it } from 'vitest';
import { louvainGroups } from './louvain-partition';
import type { WeightedEdge } from './louvain-partition';

function clique(names: readonly string[], weight = 1): WeightedEdge[] {
  return names.flatMap((a, i) => names.slice(i + 1).map((b) => ({ source: a, target: b, weight })));
}

const left = ['a1', 'a2', 'a3', 'a4', 'a5'];
const right = ['b1', 'b2', 'b3', 'b4', 'b5'];

describe('louvainGroups', () => {
  it('splits two cliques joined by one weak edge into two communities', () => {
    const edges = [...clique(left), ...clique(right), { source: 'a1', target: 'b1', weight: 0.1 }];
    expect(louvainGroups([...left, ...right], edges)).toEqual([left, right]);
  });

  it('ignores negative and zero weights: a heavy negative edge does not join the cliques', () => {
    const edges = [...clique(left), ...clique(right), ...right.map((b, i) => ({ source: left[i]!, target: b, weight: -50 })), { source: 'a2', target: 'b2', weight: 0 }];
    expect(louvainGroups([...left, ...right], edges)).toEqual([left, right]);
  });

  it('respects weights: a strong bridge pulls its ends together away from weak cliques', () => {
    const edges = [...clique(['x1', 'x2', 'x3'], 0.01), ...clique(['y1', 'y2', 'y3'], 0.01), { source: 'x1', target: 'y1', weight: 100 }];
    const groups = louvainGroups(['x1', 'x2', 'x3', 'y1', 'y2', 'y3'], edges);
    expect(groups.find((g) => g.includes('x1'))).toContain('y1');
  });

  it('gives the same communities on every run and whatever order the graph arrives in', () => {
    const nodes = Array.from({ length: 60 }, (_, i) => `n${i}`);
    const edges: WeightedEdge[] = [];
    for (let i = 0; i < 60; i++) for (const d of [1, 2, 7, 13]) edges.push({ source: `n${i}`, target: `n${(i * d + 3) % 60}`, weight: 1 + ((i * d) % 5) });
    const first = louvainGroups(nodes, edges);
    expect(first.length).toBeGreaterThan(1);
    for (let run = 0; run < 5; run++) expect(louvainGroups([...nodes].reverse(), [...edges].reverse())).toEqual(first);
  });

  it('leaves isolated nodes alone and ignores edges to nodes outside the set', () => {
    expect(louvainGroups(['a', 'b', 'c'], [{ source: 'a', target: 'b', weight: 1 }, { source: 'c', target: 'z', weight: 5 }])).toEqual([['a', 'b'], ['c']]);
    expect(louvainGroups(['a', 'b'], [])).toEqual([['a'], ['b']]);
  });
});
