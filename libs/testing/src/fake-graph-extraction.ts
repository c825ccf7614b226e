// What the benchmarks' and tests' fake model answers to an extraction call (see scripts/bench-extraction-cost.ts).

interface FakeGraph {
  entities: Array<{ name: string; type: string; description: string; attributes: Array<{ key: string; value: string }> }>;
  relationships: Array<{ source: string; target: string; label: string; description: string; strength: number }>;
}

/**
 * A deterministic stand-in for a model: capitalised phrases become entities (with the
 * sentence that names them as description), phrases in one sentence become relationships.
 */
function fakeGraph(text: string): FakeGraph {
  const entities = new Map<string, FakeGraph['entities'][number]>();
  const relationships: FakeGraph['relationships'] = [];
  for (const sentence of text.split(/(?<=[.!?])\s+/)) {
    const names = [...new Set(sentence.match(/\b[A-Z][\p{L}'-]+(?:\s+(?:of\s+|the\s+)?[A-Z][\p{L}'-]+)*/gu) ?? [])].filter((n) => n.length > 3).slice(0, 6);
    for (const name of names) {
      if (!entities.has(name.toLowerCase()) && entities.size < 25) {
        entities.set(name.toLowerCase(), { name, type: /\d/.test(name) ? 'date' : 'concept', description: sentence.slice(0, 200), attributes: [] });
      }
    }
    for (let i = 1; i < names.length && relationships.length < 25; i++) {
      relationships.push({ source: names[0]!, target: names[i]!, label: 'related to', description: sentence.slice(0, 200), strength: 6 });
    }
  }
  return { entities: [...entities.values()], relationships };
}

/** The graph as Trellis's extraction prompt asks for it: one JSON object. */
export function graphJson(text: string): string {
  return JSON.stringify(fakeGraph(text));
}

/**
 * The same graph in LightRAG's delimited-row format: `entity<|#|>name<|#|>type<|#|>description`
 * and `relation<|#|>source<|#|>target<|#|>keywords<|#|>description` rows, then the completion
 * marker.
 */
export function graphRecords(text: string): string {
  const d = '<|#|>';
  const flat = (s: string) => s.replace(/\s+/g, ' ').replaceAll(d, ' ');
  const graph = fakeGraph(text);
  const rows = [
    ...graph.entities.map((e) => ['entity', e.name, e.type, flat(e.description)].join(d)),
    ...graph.relationships.map((r) => ['relation', r.source, r.target, r.label, flat(r.description)].join(d)),
  ];
  return [...rows, '<|COMPLETE|>'].join('\n');
}
