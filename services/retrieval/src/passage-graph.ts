import { titleKey } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { ChunkFilter, ChunkRepository, EntityNode, GraphReadRepository, RelationshipEdge } from '@trellis/storage';
import { namedEntities } from './named-entities';
import { secondHopNames } from './second-hop';
import { DEFAULT_PAGERANK_OPTIONS, WalkGraph, walk } from './personalized-pagerank';
import type { WalkSeed } from './personalized-pagerank';

/** What the passage graph reads: the graph around the question, and dense passage search for the prior. */
export interface PassageGraphReads {
  readonly graphReads: Pick<
    GraphReadRepository,
    'searchEntityNodesByName' | 'searchRelationshipsByVector' | 'relationshipEdgesOfEntities' | 'chunkIdsForEntities' | 'entityIdsForChunks' | 'getEntityNodes'
  >;
  readonly chunks: Pick<ChunkRepository, 'searchChunksByVector' | 'chunkIdsOfDocumentsTitled'>;
}

/** Relationships (facts) nearest the question whose ends seed the walk (HippoRAG 2 keeps 5 after an LLM filter). */
const FACT_SEEDS = 10;
/** Passages nearest the question: the dense prior of the walk, and where their entities join it. */
const PRIOR_PASSAGES = 30;
/** Names taken from the best dense passage to look its bridge entities up by (as hybrid's second hop does). */
const BRIDGE_NAMES = 12;
/**
 * A bridge entity's seed weight against one the question names: it is a step further from
 * the question, which a walker at the best passage takes with the damping's probability.
 */
const BRIDGE_WEIGHT = DEFAULT_PAGERANK_OPTIONS.damping;
/** Share of the restart probability on passages; the rest goes to entity seeds. */
const PASSAGE_SHARE = 0.5;
/**
 * An entity mentioned by more passages than this links none of them: a walker at such a hub
 * would reach each of its passages with less than a hundredth of its mass, and fetching them
 * all would cost more than the whole rest of the walk, so they are not read (its mention
 * count says it is a hub).
 */
const MAX_ENTITY_PASSAGES = 100;
/**
 * Relationships read per entity and end, the heaviest first: a walker at an entity with more
 * links than this passes less than a hundredth of its mass along each, as at a hub's passages,
 * and a hub seed's thousands of edges (6,220 at 100k chunks) cost more to read than the rest of
 * the walk. An edge a hub shares with an entity that is not one is still read from that end.
 * The weighted walk expands from hubs within the same bound (graph-retriever.ts).
 */
export const MAX_ENTITY_RELATIONSHIPS = MAX_ENTITY_PASSAGES;
/** Passages of pages about the seeds read at most per question (see restartAtPagesAbout). */
const MAX_TITLED_PASSAGES = 1_000;
/** Entities in the walked neighbourhood at most (seeds and the entities of the prior passages come first). */
const MAX_ENTITIES = 400;

export interface PassageGraphResult {
  /** Chunk id → stationary probability of the walk, highest first; passages the graph reaches may lie outside the filter. */
  readonly passageScores: Map<string, number>;
  /** Entity id → stationary probability of the walk, highest first. */
  readonly entityScores: Map<string, number>;
  /** The walked entities, names and mention counts only (the few a result keeps are read whole). */
  readonly entities: EntityNode[];
  /** The relationships the walk ran on, as edges (their rows are read for the few a result keeps). */
  readonly relationships: RelationshipEdge[];
  /** Entities the walk restarts at (hop 0). */
  readonly seeds: ReadonlySet<string>;
}

/** Passage and entity ids share one walk as nodes of two kinds. */
const ENTITY = 0;
const PASSAGE = 1;

/**
 * Personalized PageRank over entities and passages, after HippoRAG 2. Passages are nodes beside
 * entities, linked to the entities they mention (the more passages an entity is in, the
 * weaker each link, as in the damping of named seeds); entities are linked by their relationships
 * and, when resolution kept two entities of one name apart, by a synonym edge. The walk
 * restarts at the ends of the relationships whose text is nearest the question, at the
 * entities it names (each damped by how many passages mention it: a hub says little), at half
 * that weight at the entities the best dense passage names beyond the question (its bridges),
 * at the passages nearest the question in proportion to their similarity, and at the pages
 * titled by a seed's name with that seed's weight (restartAtPagesAbout). A passage therefore
 * ranks by its own similarity and by how strongly the graph ties it to what the question is
 * about: the second hop of a multi-hop question is reached through the bridge entity its
 * first passage names. Only names and triples are read, never descriptions, so graphs of
 * OpenIE triples work as well as described ones.
 */
export async function rankPassages(reads: PassageGraphReads, scope: KbScope, queryVector: Float32Array, queryText: string, filter?: ChunkFilter): Promise<PassageGraphResult> {
  const [named, facts, dense] = await Promise.all([
    namedEntities(reads.graphReads, scope, queryText),
    reads.graphReads.searchRelationshipsByVector(scope, queryVector, FACT_SEEDS),
    reads.chunks.searchChunksByVector(scope, queryVector, PRIOR_PASSAGES, filter),
  ]);
  const seedWeights = new Map(named);
  const bestFact = Math.max(0, ...facts.map((f) => f.score));
  for (const { relationship, score } of facts) {
    if (relationship.weight < 0 || bestFact <= 0) continue;
    for (const id of [relationship.sourceId, relationship.targetId]) seedWeights.set(id, Math.max(seedWeights.get(id) ?? 0, Math.max(0, score) / bestFact));
  }
  const prior = densePrior(dense.map((d) => ({ id: d.chunk.id, score: d.score })));
  for (const [id, weight] of await bridgeEntities(reads.graphReads, scope, dense[0]?.chunk.text, queryText)) {
    if (!seedWeights.has(id)) seedWeights.set(id, BRIDGE_WEIGHT * weight);
  }

  // The neighbourhood: seeds, their relationships' other ends, and the entities of the prior passages.
  const entityIds = new Set(seedWeights.keys());
  const [relationships, ofPassages] = await Promise.all([
    entityIds.size > 0 ? reads.graphReads.relationshipEdgesOfEntities(scope, [...entityIds], MAX_ENTITY_RELATIONSHIPS) : Promise.resolve([]),
    reads.graphReads.entityIdsForChunks(scope, [...prior.keys()]),
  ]);
  const walked = relationships.filter((r) => r.weight >= 0);
  for (const ids of ofPassages.values()) for (const id of ids) if (entityIds.size < MAX_ENTITIES) entityIds.add(id);
  for (const r of walked) for (const id of [r.sourceId, r.targetId]) if (entityIds.size < MAX_ENTITIES) entityIds.add(id);
  const entities = await reads.graphReads.getEntityNodes(scope, [...entityIds]);
  const linkable = entities.filter((e) => e.mentionCount <= MAX_ENTITY_PASSAGES).map((e) => e.id);
  const mentions = await reads.graphReads.chunkIdsForEntities(scope, linkable);
  const passageCounts = new Map(entities.map((e) => [e.id, mentions.get(e.id)?.length ?? e.mentionCount]));

  const graph = new WalkGraph(2);
  const kept = walked.filter((r) => entityIds.has(r.sourceId) && entityIds.has(r.targetId));
  for (const r of kept) graph.link(ENTITY, r.sourceId, ENTITY, r.targetId, 1 + Math.log1p(Math.max(0, r.weight)));
  for (const [entityId, chunkIds] of mentions) {
    if (chunkIds.length > MAX_ENTITY_PASSAGES) continue;
    // A passage's walker prefers its specific entities: an entity it shares with few passages says more about it.
    const weight = 1 / Math.log2(1 + chunkIds.length);
    for (const chunkId of chunkIds) graph.link(ENTITY, entityId, PASSAGE, chunkId, weight);
  }
  linkSameNames(graph, entities);
  await restartAtPagesAbout(reads.chunks, scope, entities, seedWeights, prior);

  const seeds: WalkSeed[] = [];
  const specific = new Map([...seedWeights].map(([id, w]) => [id, w / Math.max(1, passageCounts.get(id) ?? 1)]));
  addShare(seeds, specific, ENTITY, prior.size > 0 ? 1 - PASSAGE_SHARE : 1);
  addShare(seeds, prior, PASSAGE, specific.size > 0 ? PASSAGE_SHARE : 1);
  const ranked = walk(graph, seeds);

  const passageScores = new Map<string, number>();
  const entityScores = new Map<string, number>();
  for (const { kind, id, value } of ranked.sort((a, b) => b.value - a.value)) (kind === PASSAGE ? passageScores : entityScores).set(id, value);
  return { passageScores, entityScores, entities, relationships: kept, seeds: new Set(seedWeights.keys()) };
}

/**
 * The entities the best dense passage names beyond the question, found by name: the bridge
 * of a multi-hop question (the film's director, the album's singer). Looked up by name
 * rather than through that passage's own mentions because extraction may split one name into
 * entities that share no edge (the title run into the first sentence, a list read as one
 * name): the entity of the passage about the bridge is still found by its name.
 */
async function bridgeEntities(graphReads: PassageGraphReads['graphReads'], scope: KbScope, bestPassage: string | undefined, queryText: string): Promise<Map<string, number>> {
  const names = bestPassage ? secondHopNames(bestPassage, queryText, BRIDGE_NAMES) : [];
  return names.length > 0 ? namedEntities(graphReads, scope, names.join(' ')) : new Map();
}

/**
 * The pages about the seeds: a passage of a document titled by a seed's name (titleKey) joins
 * the passage restarts with that seed's weight, shared among the page's passages. The walk then
 * restarts where the graph's answer to "what is X" is written, not only at the passages that
 * mention X, which is where a bridge entity's facts are on an encyclopedia or a wiki. A page
 * longer than MAX_ENTITY_PASSAGES passages is left out, as a hub entity's mentions are.
 */
async function restartAtPagesAbout(
  chunks: PassageGraphReads['chunks'],
  scope: KbScope,
  entities: readonly EntityNode[],
  seedWeights: ReadonlyMap<string, number>,
  prior: Map<string, number>,
): Promise<void> {
  const seeds = entities.filter((e) => (seedWeights.get(e.id) ?? 0) > 0).map((e) => ({ id: e.id, key: titleKey(e.name) }));
  const pages = await chunks.chunkIdsOfDocumentsTitled(scope, seeds.map((s) => s.key), MAX_TITLED_PASSAGES);
  for (const seed of seeds) {
    const passages = pages.get(seed.key) ?? [];
    if (passages.length === 0 || passages.length > MAX_ENTITY_PASSAGES) continue;
    const weight = seedWeights.get(seed.id)! / passages.length;
    for (const id of passages) prior.set(id, Math.max(prior.get(id) ?? 0, weight));
  }
}

/**
 * Dense similarities as restart weights: how far each passage stands above the least similar
 * one kept, so the walk restarts most often at the passages that stand out.
 */
function densePrior(scored: ReadonlyArray<{ id: string; score: number }>): Map<string, number> {
  if (scored.length === 0) return new Map();
  const max = Math.max(...scored.map((s) => s.score));
  const min = Math.min(...scored.map((s) => s.score));
  if (max <= 0) return new Map();
  return new Map(scored.map((s) => [s.id, max > min ? (s.score - min) / (max - min) : 1]));
}

/** Entities of one normalised name that resolution kept apart are still one name: a synonym edge joins them. */
function linkSameNames(graph: WalkGraph, entities: readonly EntityNode[]): void {
  const byName = new Map<string, string[]>();
  for (const e of entities) byName.set(e.normalizedName, [...(byName.get(e.normalizedName) ?? []), e.id]);
  for (const ids of byName.values()) {
    for (let i = 1; i < ids.length; i++) graph.link(ENTITY, ids[0]!, ENTITY, ids[i]!, 1);
  }
}

/** Seeds of this kind from `weights`, scaled so that together they carry `share` of the restart mass. */
function addShare(seeds: WalkSeed[], weights: ReadonlyMap<string, number>, kind: number, share: number): void {
  const total = [...weights.values()].reduce((sum, w) => sum + Math.max(0, w), 0);
  if (total <= 0 || share <= 0) return;
  for (const [id, w] of weights) if (w > 0) seeds.push({ kind, id, weight: (share * w) / total });
}
