import type { KbScope } from '@trellis/contracts';
import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';

/** What a refresh local to a change reads of the graph (storage's GraphReadRepository fits). */
export interface CommunityRegionGraph {
  getEntities(scope: KbScope, ids: readonly string[]): Promise<CommunityEntity[]>;
  /** Relationships with either end in `entityIds`. */
  relationshipsOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<CommunityRelationship[]>;
}

/** What it reads of the stored communities (storage's CommunityRepository fits). */
export interface CommunityRegionStore {
  /** The communities (every level) holding any of these entities, members included. */
  listCommunitiesOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<CommunityRecord[]>;
  /** Those of these entities that are members of some community. */
  listAssignedEntities(scope: KbScope, entityIds: readonly string[]): Promise<string[]>;
}

/** The part of the graph a change can move, with the stored communities inside it. */
export interface CommunityRegion {
  /** Entities of the region that still exist: of the changed level-0 communities, not whole branches. */
  readonly entities: readonly CommunityEntity[];
  /** Every relationship with an end among `entities` (so each entity's content hash is whole). */
  readonly relationships: readonly CommunityRelationship[];
  /** The stored communities of the region, every level: each whole branch, up to its top. */
  readonly previous: readonly CommunityRecord[];
}

/**
 * The region of the graph a refresh after these entity changes must look at again, read
 * without the rest of the graph.
 *
 * Why this is enough (locality of modularity): Louvain moves a node by the modularity gain
 * ΔQ = k_i,in / m − γ·Σ_tot·k_i / 2m², which depends only on the node's own edges and on the
 * totals of the communities at their other ends. A change to an entity or to one of its
 * relationships is recorded for the entities it touches (both ends of a relationship), so every
 * edge that changed has both ends among `changedIds`. The communities that hold a changed
 * entity are the only ones whose partition or content can have moved; the rest keep the
 * same edges and the same local optimum (only the global 1/m scale moves, by the share of the
 * graph that changed, which a full rebuild settles). The region is therefore:
 *
 *  - the stored communities of every branch of the hierarchy (a top community and everything
 *    below it) that holds a changed entity, as records: above level 0 each community keeps its
 *    parent (buildHierarchy, keepParents), and an ancestor's members, content hash and report
 *    come from its children (childrenHashOf, reportFromChildren), so no entity of an untouched
 *    sibling is read;
 *  - the entities and relationships of the level-0 communities that hold a changed entity, and
 *    of the changed entities themselves (new ones are in no community yet): detection re-runs
 *    on these;
 *  - entities in no community next to any of these (through others in none): detection left
 *    them alone only because their neighbours were kept, and may now place them.
 *
 * A branch that holds no changed entity keeps its communities, ids and reports untouched.
 * Branches are disjoint in members, so the region's new communities never overlap the others.
 */
export async function readRegion(graph: CommunityRegionGraph, store: CommunityRegionStore, scope: KbScope, changedIds: readonly string[]): Promise<CommunityRegion> {
  if (changedIds.length === 0) return { entities: [], relationships: [], previous: [] };
  const holding = await store.listCommunitiesOfEntities(scope, changedIds);
  const tops = holding.filter((c) => c.parentId === null);
  // A top at level 0 is its whole branch; the branches of higher tops are read by their members.
  const higher = [...new Set(tops.filter((c) => c.level > 0).flatMap((c) => c.memberIds))];
  const below = higher.length === 0 ? [] : (await store.listCommunitiesOfEntities(scope, higher)).filter((c) => c.parentId !== null);
  const previous = [...tops, ...below];
  const region = new Set([...holding.filter((c) => c.level === 0).flatMap((c) => c.memberIds), ...changedIds]);

  // Each round reads the relationships of the entities added last; neighbours in no community
  // join the region, and their own relationships are read in the next round.
  const relationships = new Map<string, CommunityRelationship>();
  let frontier = [...region];
  while (frontier.length > 0) {
    const outside = new Set<string>();
    for (const r of await graph.relationshipsOfEntities(scope, frontier)) {
      relationships.set(r.id, r);
      for (const end of [r.sourceId, r.targetId]) if (!region.has(end)) outside.add(end);
    }
    const assigned = new Set(outside.size === 0 ? [] : await store.listAssignedEntities(scope, [...outside]));
    frontier = [...outside].filter((id) => !assigned.has(id));
    for (const id of frontier) region.add(id);
  }
  const entities = await graph.getEntities(scope, [...region].sort());
  return { entities, relationships: [...relationships.values()], previous };
}
