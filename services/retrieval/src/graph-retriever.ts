import type { KbScope } from '@trellis/contracts';
import type { EntityRecord, RelationshipRecord, TrellisStore } from '@trellis/storage';

export interface GraphRetrievalOptions {
  /** Hops of the walk after the seed relationships. */
  readonly depth: number;
  /** Relationships kept in the result. */
  readonly maxRelationships: number;
}

export interface WalkedRelationship {
  readonly relationship: RelationshipRecord;
  readonly score: number;
  readonly hop: number;
}

export interface GraphRetrieval {
  readonly entities: EntityRecord[];
  readonly relationships: WalkedRelationship[];
  /** Entity id → relevance, the seeds of graph-based chunk retrieval. */
  readonly entityScores: Map<string, number>;
}

/** Similarity bands: how much a relationship at that similarity to the question counts. */
const BANDS: ReadonlyArray<{ min: number; factor: number }> = [
  { min: 0.5, factor: 1.0 },
  { min: 0.35, factor: 0.8 },
  { min: 0.2, factor: 0.55 },
  { min: 0.1, factor: 0.3 },
  { min: -Infinity, factor: 0.1 },
];
const HOP_DECAY = 0.7;
const FRONTIER_PER_HOP = 12;

/**
 * The weighted walk (after AutoFlow's `retrieve_with_weight`): the relationships nearest the
 * question seed the result; each hop expands from the entities reached so far, scoring every
 * candidate relationship by its similarity band, its weight (how often and how strongly the
 * corpus states it) and a decay per hop, and keeps the best. Relationships with negative
 * weight are never walked.
 */
export class GraphRetriever {
  constructor(private readonly store: TrellisStore) {}

  async retrieve(scope: KbScope, queryVector: Float32Array, queryText: string, options: GraphRetrievalOptions): Promise<GraphRetrieval> {
    const seeds = await this.store.searchRelationshipsByVector(scope, queryVector, Math.max(options.maxRelationships, 10));
    const selected = new Map<string, WalkedRelationship>();
    for (const { relationship, score } of seeds) {
      if (relationship.weight < 0) continue;
      selected.set(relationship.id, { relationship, score: this.score(score, relationship, 0), hop: 0 });
    }
    // Entities the question names are seeds too, even when no relationship text is close.
    const named = await this.store.searchEntitiesByName(scope, queryText, 5);
    const entityScores = new Map<string, number>();
    for (const e of named) entityScores.set(e.id, 1);

    let frontier = this.frontier(selected, entityScores);
    for (let hop = 1; hop <= options.depth && frontier.length > 0; hop++) {
      const candidates = (await this.store.relationshipsOfEntities(scope, frontier)).filter((r) => r.weight >= 0 && !selected.has(r.id));
      if (candidates.length === 0) break;
      const similarities = await this.store.relationshipSimilarities(scope, queryVector, candidates.map((r) => r.id));
      const scored = candidates
        .map((relationship) => ({ relationship, score: this.score(similarities.get(relationship.id) ?? 0, relationship, hop), hop }))
        .sort((a, b) => b.score - a.score)
        .slice(0, options.maxRelationships);
      for (const s of scored) selected.set(s.relationship.id, s);
      frontier = this.frontier(new Map(scored.map((s) => [s.relationship.id, s])), new Map());
    }

    const relationships = [...selected.values()].sort((a, b) => b.score - a.score).slice(0, options.maxRelationships);
    for (const r of relationships) {
      for (const id of [r.relationship.sourceId, r.relationship.targetId]) {
        entityScores.set(id, Math.max(entityScores.get(id) ?? 0, r.score));
      }
    }
    const entities = await this.store.getEntities(scope, [...entityScores.keys()]);
    entities.sort((a, b) => (entityScores.get(b.id) ?? 0) - (entityScores.get(a.id) ?? 0));
    return { entities, relationships, entityScores };
  }

  private score(similarity: number, relationship: RelationshipRecord, hop: number): number {
    const band = BANDS.find((b) => similarity >= b.min)!.factor;
    const weightBonus = 0.05 * Math.log1p(Math.max(0, relationship.weight));
    return (band * similarity + weightBonus) * HOP_DECAY ** hop;
  }

  /** The best-scoring entities of the last hop, to expand from next. */
  private frontier(relationships: Map<string, WalkedRelationship>, extra: Map<string, number>): string[] {
    const scores = new Map(extra);
    for (const { relationship, score } of relationships.values()) {
      for (const id of [relationship.sourceId, relationship.targetId]) scores.set(id, Math.max(scores.get(id) ?? 0, score));
    }
    return [...scores.entries()].sort((a, b) => b[1] - a[1]).slice(0, FRONTIER_PER_HOP).map(([id]) => id);
  }
}

/** The graph as text for a prompt or for a person. */
export function renderGraph(entities: readonly EntityRecord[], relationships: readonly WalkedRelationship[]): string {
  const lines: string[] = [];
  if (entities.length > 0) {
    lines.push('Entities:');
    for (const e of entities.slice(0, 30)) lines.push(`- ${e.name} (${e.type})${e.description ? `: ${truncate(e.description, 240)}` : ''}`);
  }
  if (relationships.length > 0) {
    lines.push('Relationships:');
    for (const { relationship: r } of relationships) {
      lines.push(`- ${r.sourceName} -[${r.label}]-> ${r.targetName}${r.description ? `: ${truncate(r.description, 240)}` : ''}`);
    }
  }
  return lines.join('\n');
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
