import type { v1 } from '@trellis/contracts';

/**
 * A knowledge base's graph as it compares with another knowledge base's (ids differ between
 * knowledge bases, names, provenance counts and what the summaries say do not): a lost event would drop a mention, a duplicated
 * one would add one or split an entity.
 */
export function comparableGraph(graph: v1.Subgraph) {
  const entities = graph.entities.map((e) => `${e.name}|${e.type}|${e.mentionCount}|${sentences(e.description)}`).sort();
  const relationships = graph.relationships.map((r) => `${r.sourceName}|${r.targetName}|${r.label}|${r.weight}|${r.chunkIds.length}|${sentences(r.description)}`).sort();
  return {
    entities,
    relationships,
    counts: {
      entities: entities.length,
      relationships: relationships.length,
      entityMentions: graph.entities.reduce((n, e) => n + e.mentionCount, 0),
      relationshipMentions: graph.relationships.reduce((n, r) => n + r.chunkIds.length, 0),
    },
  };
}

/**
 * A summary's words in a fixed order: summaries join their mentions in chunk-id order, and chunk
 * ids include the knowledge base, so the same mentions come in another order elsewhere (and a
 * name-only mention has no full stop to split sentences by).
 */
function sentences(description: string): string {
  return description.split(/\s+/).sort().join(' ');
}

/** Entities that share a name and type, and relationships listed twice: both 0 in a sound graph. */
export function duplicatesIn(graph: v1.Subgraph): { entities: number; relationships: number } {
  const entityKeys = graph.entities.map((e) => `${e.name.toLowerCase()}|${e.type}`);
  const relationshipKeys = graph.relationships.map((r) => `${r.sourceEntityId}|${r.targetEntityId}|${r.label}`);
  return { entities: entityKeys.length - new Set(entityKeys).size, relationships: relationshipKeys.length - new Set(relationshipKeys).size };
}
