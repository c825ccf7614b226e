import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter, EntityRecord, GraphReadRepository, RelationshipEdge, RelationshipRecord } from '@trellis/storage';
import { namedEntities } from './named-entities';
import { MAX_ENTITY_RELATIONSHIPS, rankPassages } from './passage-graph';
import type { PassageGraphReads } from './passage-graph';

export const GRAPH_STRATEGIES = ['weighted', 'ppr'] as const;
/** `weighted`: AutoFlow-style multi-hop walk; `ppr`: personalized PageRank over entities and passages (HippoRAG 2). */
export type GraphStrategy = (typeof GRAPH_STRATEGIES)[number];
export const DEFAULT_GRAPH_STRATEGY: GraphStrategy = 'ppr';

export interface GraphRetrievalOptions {
  /** Hops of the walk after the seed relationships. */
  readonly depth: number;
  /** Relationships kept in the result. */
  readonly maxRelationships: number;
  /** Defaults to {@link DEFAULT_GRAPH_STRATEGY}. */
  readonly strategy?: GraphStrategy;
  /** The documents passages may come from (the dense prior of `ppr`). */
  readonly filter?: ChunkFilter;
  /**
   * The caller wants the passage ranking only (chunk retrieval): `ppr` then reads no rows of the
   * entities and relationships it walked, and returns none (at 100k chunks those reads were
   * about a millisecond of each graph or hybrid question). The weighted walk has no passage
   * ranking of its own: it returns its entities, whose mention counts chunk retrieval needs.
   */
  readonly passagesOnly?: boolean;
}

export interface WalkedRelationship {
  readonly relationship: RelationshipRecord;
  readonly score: number;
  readonly hop: number;
}

/** A relationship the walk scored, before its row is read (only the ones a result keeps are). */
interface WalkedEdge {
  readonly edge: RelationshipEdge;
  readonly score: number;
  readonly hop: number;
}

export interface GraphRetrieval {
  readonly entities: EntityRecord[];
  readonly relationships: WalkedRelationship[];
  /** Entity id → relevance, the seeds of graph-based chunk retrieval. */
  readonly entityScores: Map<string, number>;
  /** Chunk id → relevance, best first, when the strategy ranks passages itself (`ppr`). */
  readonly passageScores?: Map<string, number>;
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
/** PPR: entities kept as seeds of graph-based chunk retrieval. */
const PPR_TOP_ENTITIES = 40;

/**
 * The weighted walk (after AutoFlow's `retrieve_with_weight`): the relationships nearest the
 * question seed the result; each hop expands from the entities reached so far, scoring every
 * candidate relationship by its similarity band, its weight (how often and how strongly the
 * corpus states it) and a decay per hop, and keeps the best. Relationships with negative
 * weight are never walked. From a hub, only its MAX_ENTITY_RELATIONSHIPS heaviest edges per
 * end are candidates, the bound of the ppr walk.
 */
export class GraphRetriever {
  constructor(
    private readonly graphReads: GraphReadRepository,
    private readonly chunks: PassageGraphReads['chunks'],
  ) {}

  async retrieve(scope: KbScope, queryVector: Float32Array, queryText: string, options: GraphRetrievalOptions): Promise<GraphRetrieval> {
    const strategy = options.strategy ?? DEFAULT_GRAPH_STRATEGY;
    switch (strategy) {
      case 'weighted':
        return this.weightedWalk(scope, queryVector, queryText, options);
      case 'ppr':
        return this.pageRank(scope, queryVector, queryText, options);
      default: {
        const unknown: never = strategy;
        throw new Error(`unknown graph strategy ${String(unknown)}`);
      }
    }
  }

  /**
   * Personalized PageRank over entities and passages (HippoRAG 2, see rankPassages). Entities
   * score by their PageRank (best = 1), relationships by that of their two ends, and the walk's
   * passage ranking is the graph signal of chunk retrieval. The walk runs on the seeds'
   * relationships (hop 0); from depth 2 the relationships between the entities it reached
   * most join the result (hop 1), so a graph context shows the second hop too.
   */
  private async pageRank(scope: KbScope, queryVector: Float32Array, queryText: string, options: GraphRetrievalOptions): Promise<GraphRetrieval> {
    const walk = await rankPassages({ graphReads: this.graphReads, chunks: this.chunks }, scope, queryVector, queryText, options.filter);
    const best = Math.max(0, ...walk.entityScores.values());
    const entityScores = topEntities(walk.entityScores, best);
    if (options.passagesOnly) return { entities: [], relationships: [], entityScores, passageScores: walk.passageScores };
    const reached = [...walk.entityScores.keys()].filter((id) => !walk.seeds.has(id)).slice(0, FRONTIER_PER_HOP);
    const known = new Set(walk.relationships.map((r) => r.id));
    const further =
      options.depth > 1 && reached.length > 0
        ? (await this.graphReads.relationshipEdgesOfEntities(scope, reached, MAX_ENTITY_RELATIONSHIPS)).filter((r) => r.weight >= 0 && !known.has(r.id) && walk.entityScores.has(r.sourceId) && walk.entityScores.has(r.targetId))
        : [];
    const scored = [...walk.relationships, ...further].map((edge) => ({
      edge,
      score: ((walk.entityScores.get(edge.sourceId) ?? 0) + (walk.entityScores.get(edge.targetId) ?? 0)) / (2 * (best || 1)),
      hop: walk.seeds.has(edge.sourceId) || walk.seeds.has(edge.targetId) ? 0 : 1,
    }));
    const [relationships, entities] = await Promise.all([
      this.withRows(scope, keepRoomForHops(scored, options.maxRelationships, further.length > 0 ? 1 : 0)),
      this.graphReads.getEntities(scope, [...entityScores.keys()]),
    ]);
    return { entities, relationships, entityScores, passageScores: walk.passageScores };
  }

  private async weightedWalk(scope: KbScope, queryVector: Float32Array, queryText: string, options: GraphRetrievalOptions): Promise<GraphRetrieval> {
    // Entities the question names are seeds too, even when no relationship text is close. On TiDB both reads are round trips: they overlap.
    const [seeds, entityScores] = await Promise.all([
      this.graphReads.searchRelationshipsByVector(scope, queryVector, Math.max(options.maxRelationships, 10)),
      namedEntities(this.graphReads, scope, queryText),
    ]);
    const selected = new Map<string, WalkedEdge>();
    for (const { relationship, score } of seeds) {
      if (relationship.weight < 0) continue;
      selected.set(relationship.id, { edge: relationship, score: this.score(score, relationship, 0), hop: 0 });
    }

    let frontier = this.frontier(selected, entityScores);
    for (let hop = 1; hop <= options.depth && frontier.length > 0; hop++) {
      // A hub offers its heaviest edges only: scoring its thousands by similarity cost more than the rest of the walk.
      const candidates = (await this.graphReads.relationshipEdgesOfEntities(scope, frontier, MAX_ENTITY_RELATIONSHIPS)).filter((r) => r.weight >= 0 && !selected.has(r.id));
      if (candidates.length === 0) break;
      const similarities = await this.graphReads.relationshipSimilarities(scope, queryVector, candidates.map((r) => r.id));
      const scored = candidates
        .map((edge) => ({ edge, score: this.score(similarities.get(edge.id) ?? 0, edge, hop), hop }))
        .sort((a, b) => b.score - a.score)
        .slice(0, options.maxRelationships);
      for (const s of scored) selected.set(s.edge.id, s);
      frontier = this.frontier(new Map(scored.map((s) => [s.edge.id, s])), new Map());
    }

    const seedRows = new Map(seeds.map(({ relationship }) => [relationship.id, relationship]));
    const relationships = await this.withRows(scope, keepRoomForHops([...selected.values()], options.maxRelationships, options.depth), seedRows);
    for (const r of relationships) {
      for (const id of [r.relationship.sourceId, r.relationship.targetId]) {
        entityScores.set(id, Math.max(entityScores.get(id) ?? 0, r.score));
      }
    }
    const entities = await this.graphReads.getEntities(scope, [...entityScores.keys()]);
    entities.sort((a, b) => (entityScores.get(b.id) ?? 0) - (entityScores.get(a.id) ?? 0));
    return { entities, relationships, entityScores };
  }

  private score(similarity: number, edge: RelationshipEdge, hop: number): number {
    const band = BANDS.find((b) => similarity >= b.min)!.factor;
    const weightBonus = 0.05 * Math.log1p(Math.max(0, edge.weight));
    return (band * similarity + weightBonus) * HOP_DECAY ** hop;
  }

  /**
   * The kept relationships with their rows (names, label, description), in the same order; rows
   * not in `known` are read, and one a concurrent edit removed is left out.
   */
  private async withRows(scope: KbScope, walked: readonly WalkedEdge[], known: ReadonlyMap<string, RelationshipRecord> = new Map()): Promise<WalkedRelationship[]> {
    const missing = walked.map((w) => w.edge.id).filter((id) => !known.has(id));
    const rows = new Map([...known, ...(await this.graphReads.getRelationships(scope, missing)).map((r) => [r.id, r] as const)]);
    return walked.flatMap(({ edge, score, hop }) => {
      const relationship = rows.get(edge.id);
      return relationship ? [{ relationship, score, hop }] : [];
    });
  }

  /** The best-scoring entities of the last hop, to expand from next. */
  private frontier(relationships: Map<string, WalkedEdge>, extra: Map<string, number>): string[] {
    const scores = new Map(extra);
    for (const { edge, score } of relationships.values()) {
      for (const id of [edge.sourceId, edge.targetId]) scores.set(id, Math.max(scores.get(id) ?? 0, score));
    }
    return [...scores.entries()].sort((a, b) => b[1] - a[1]).slice(0, FRONTIER_PER_HOP).map(([id]) => id);
  }
}

/** The PPR_TOP_ENTITIES best of the walk's entity scores (best first), scaled so that `best`, the highest, is 1. */
function topEntities(scores: ReadonlyMap<string, number>, best: number): Map<string, number> {
  return new Map([...scores].slice(0, PPR_TOP_ENTITIES).map(([id, value]) => [id, best > 0 ? value / best : 0]));
}

/**
 * The best `max` relationships, of which the seeds (hop 0) take at most three quarters when the
 * walk went further: with a semantic embedder the seeds are the most similar by construction
 * and would otherwise fill the whole result, leaving out the hops the walk exists to find (the
 * second half of a multi-hop question). The rest goes to the best of the later hops, then to
 * seeds again.
 */
function keepRoomForHops(walked: WalkedEdge[], max: number, depth: number): WalkedEdge[] {
  const byScore = walked.sort((a, b) => b.score - a.score);
  if (depth === 0) return byScore.slice(0, max);
  const seedLimit = max - Math.ceil(max / 4);
  const seeds = byScore.filter((r) => r.hop === 0);
  const kept = [...seeds.slice(0, seedLimit), ...byScore.filter((r) => r.hop > 0)].sort((a, b) => b.score - a.score).slice(0, max);
  const rest = seeds.slice(seedLimit, seedLimit + max - kept.length);
  return [...kept, ...rest].sort((a, b) => b.score - a.score);
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
