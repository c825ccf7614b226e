// What the benchmarks' and tests' fake model answers to an extraction call (see scripts/bench-extraction-cost.ts).

/**
 * A deterministic stand-in for a model: capitalised phrases become entities (with the
 * sentence that names them as description), phrases in one sentence become relationships.
 */
export function graphJson(text: string): string {
  const entities = new Map<string, { name: string; type: string; description: string; attributes: Array<{ key: string; value: string }> }>();
  const relationships: Array<{ source: string; target: string; label: string; description: string; strength: number }> = [];
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
  return JSON.stringify({ entities: [...entities.values()], relationships });
}
