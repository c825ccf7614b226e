import cytoscape from 'cytoscape';
import { useEffect, useRef } from 'react';
import type { EntityDetail } from '../../api/types';

/**
 * An entity's neighbourhood drawn with cytoscape.js: the entity in the middle, its neighbours
 * around it, one edge per relationship (labelled, thicker for a higher weight). Clicking a node
 * opens that entity; the same choices are offered as buttons beside the canvas for the keyboard.
 */
export function GraphView({ detail, onOpen }: { detail: EntityDetail; onOpen: (entityId: string) => void }) {
  const container = useRef<HTMLDivElement>(null);
  const openRef = useRef(onOpen);
  openRef.current = onOpen;
  useEffect(() => {
    if (container.current === null) return;
    const nodes = [detail.entity, ...detail.neighbours.filter((n) => n.id !== detail.entity.id)];
    const known = new Set(nodes.map((n) => n.id));
    const graph = cytoscape({
      container: container.current,
      elements: [
        ...nodes.map((n) => ({ data: { id: n.id, label: n.name, center: n.id === detail.entity.id ? 1 : 0 } })),
        ...detail.relationships
          .filter((r) => known.has(r.sourceEntityId) && known.has(r.targetEntityId))
          .map((r) => ({ data: { id: `rel-${r.id}`, source: r.sourceEntityId, target: r.targetEntityId, label: r.label, weight: Math.max(0, r.weight) } })),
      ],
      style: [
        { selector: 'node', style: { label: 'data(label)', 'font-size': 11, 'background-color': '#7aa2dc', 'text-valign': 'bottom', 'text-margin-y': 4, width: 22, height: 22 } },
        { selector: 'node[center = 1]', style: { 'background-color': '#f5a524', width: 34, height: 34, 'font-weight': 'bold' } },
        {
          selector: 'edge',
          style: {
            label: 'data(label)',
            'font-size': 9,
            color: '#5b6675',
            'curve-style': 'bezier',
            'target-arrow-shape': 'triangle',
            'line-color': '#b8c4d4',
            'target-arrow-color': '#b8c4d4',
            width: 'mapData(weight, 0, 10, 1, 6)',
            'text-rotation': 'autorotate',
          },
        },
      ],
      layout: { name: 'concentric', concentric: (node) => (node.data('center') === 1 ? 2 : 1), levelWidth: () => 1, minNodeSpacing: 30, animate: false },
      wheelSensitivity: 0.3,
    });
    graph.on('tap', 'node', (e) => openRef.current(e.target.id() as string));
    return () => graph.destroy();
  }, [detail]);
  return <div ref={container} className="graph-canvas" role="img" aria-label={`Graph of ${detail.entity.name} and ${detail.neighbours.length} neighbours`} data-testid="graph-canvas" />;
}
