import { stableId } from '@trellis/contracts';
import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';
import { contentHashOf, entitySignatures } from './community-content';
import { louvainGroups } from './louvain-partition';
import type { WeightedEdge } from './louvain-partition';

/** Levels 0 (finest) to 2: enough to go from topics to themes on a knowledge base. */
export const MAX_COMMUNITY_LEVELS = 3;
/** A single entity is not a community: its own summary already says what a report would. */
export const MIN_COMMUNITY_SIZE = 2;

/**
 * Louvain's result is already the top of its own aggregation: run again at the same resolution
 * on the graph of its communities, it merges nothing. Each level up therefore halves the
 * resolution, which lets Louvain join communities that belong together at a coarser grain.
 */
export function resolutionAt(level: number): number {
  return 1 / 2 ** level;
}

/** A community's place in the hierarchy, before its report is written. */
export interface CommunityShape {
  readonly id: string;
  readonly level: number;
  readonly parentId: string | null;
  readonly childIds: readonly string[];
  readonly memberIds: readonly string[];
  readonly contentHash: string;
}

export interface HierarchyInput {
  /** Parts of every community id (tenant and knowledge base): ids never collide across scopes. */
  readonly idParts: readonly string[];
  readonly entities: readonly CommunityEntity[];
  readonly relationships: readonly CommunityRelationship[];
  /** The communities stored before; their unchanged parts are kept as they are. Empty: full build. */
  readonly previous: readonly Pick<CommunityRecord, 'id' | 'level' | 'parentId' | 'memberIds' | 'contentHash'>[];
  /**
   * The entities recorded as changed since `previous` was stored, when the records are whole
   * (see CommunityChangeLog). A stored community holding none of them has the content it had:
   * its stored hash is taken as it is instead of being computed again from its members.
   */
  readonly changedIds?: ReadonlySet<string>;
}

export interface Hierarchy {
  readonly communities: readonly CommunityShape[];
  /** Entities and lower communities that detection ran on again, per level: what the refresh cost. */
  readonly redetected: readonly number[];
}

/**
 * The communities of the graph, level by level. Level 0 groups entities by Louvain over the
 * relationships (weights respected, non-positive weights ignored); each higher level runs
 * Louvain again on the graph of the level below (communities as nodes, the weights of the
 * relationships between them summed) at half the resolution (resolutionAt). A higher community
 * has at least two children; a community that merges with nothing is the top of its branch,
 * and the hierarchy stops at a level that merges nothing.
 *
 * Incremental: a stored level-0 community whose members all remain with the same content hash
 * is kept exactly, and detection runs only on the rest (the members of changed communities and
 * entities in none). Above level 0 every community keeps the parent it had, a new or split
 * one takes the parent of the majority of its members (keepParents), and detection runs only
 * on communities left without one: the upper levels change along the path of what changed and
 * nowhere else. With nothing stored this is the full build. Ids derive from level and members,
 * so a community whose members stay keeps its id (a parent gaining or losing a child gets a new
 * one, and a new report: its content changed).
 */
export function buildHierarchy(input: HierarchyInput): Hierarchy {
  const signatures = entitySignatures(input.entities, input.relationships);
  const entityIds = new Set(input.entities.map((e) => e.id));
  const edges: WeightedEdge[] = input.relationships.map((r) => ({ source: r.sourceId, target: r.targetId, weight: r.weight }));
  const idOf = (level: number, memberIds: readonly string[]) => stableId('community', ...input.idParts, level, [...memberIds].sort().join('\u0000'));

  const previousAt = (level: number) => input.previous.filter((c) => c.level === level);
  // Hashes by member set, computed once: a kept community's hash is checked and then reused.
  const hashes = new Map<string, string>();
  const changed = input.changedIds;
  if (changed !== undefined) {
    for (const c of input.previous) if (!c.memberIds.some((id) => changed.has(id))) hashes.set([...c.memberIds].sort().join('\u0000'), c.contentHash);
  }
  const hashOf = (memberIds: readonly string[]) => {
    const key = [...memberIds].sort().join('\u0000');
    return hashes.get(key) ?? hashes.set(key, contentHashOf(memberIds, signatures)).get(key)!;
  };
  const cleanLevel0 = previousAt(0).filter((c) => c.memberIds.every((id) => entityIds.has(id)) && hashOf(c.memberIds) === c.contentHash);
  const kept0 = cleanLevel0.map((c) => [...c.memberIds].sort());
  const assigned = new Set(kept0.flat());
  const affected0 = [...entityIds].filter((id) => !assigned.has(id));
  const groups0 = [...kept0, ...louvainGroups(affected0, edges)].filter((g) => g.length >= MIN_COMMUNITY_SIZE);

  const levels: Array<Array<{ id: string; memberIds: string[]; childIds: string[] }>> = [groups0.map((memberIds) => ({ id: idOf(0, memberIds), memberIds, childIds: [] }))];
  const redetected = [affected0.length];
  for (let level = 1; level < MAX_COMMUNITY_LEVELS; level++) {
    const below = levels[level - 1]!;
    const { placed, unplaced } = input.previous.length === 0 ? { placed: [], unplaced: below.map((c) => c.id) } : keepParents(below, previousAt(level));
    const groups = [...placed, ...louvainGroups(unplaced, communityEdges(below, edges), resolutionAt(level)).filter((g) => g.length >= 2)];
    if (groups.length === 0) break;
    const byId = new Map(below.map((c) => [c.id, c]));
    levels.push(
      groups.map((childIds) => {
        const memberIds = childIds.flatMap((id) => byId.get(id)!.memberIds).sort();
        return { id: idOf(level, memberIds), memberIds, childIds };
      }),
    );
    redetected.push(unplaced.length);
  }

  const parentOf = new Map<string, string>();
  for (const level of levels) for (const c of level) for (const child of c.childIds) parentOf.set(child, c.id);
  const communities = levels.flatMap((level, index) =>
    level.map((c) => ({ id: c.id, level: index, parentId: parentOf.get(c.id) ?? null, childIds: c.childIds, memberIds: c.memberIds, contentHash: hashOf(c.memberIds) })),
  );
  return { communities, redetected };
}

/**
 * The communities of one level grouped under the parents they had: each goes to the stored
 * community of the next level that held most of its members (a kept community: the parent it
 * had; a new or split one: the parent of the majority of its members, smallest id on a tie).
 * A parent left with one child, and a community whose members had no parent, are unplaced:
 * detection runs on those alone.
 *
 * Why keeping them is sound: a higher level is Louvain on the aggregated graph (communities as
 * nodes), and a move's modularity gain there depends only on the moved node's edges and the
 * totals of the communities at their other ends. A change leaves every community it does not
 * touch, and every edge between two such communities, as they were; only the touched
 * communities (nodes of the aggregated graph) can have a better place. Re-running detection on
 * every sibling of a touched community, as the refresh once did, re-groups a whole branch (on
 * the NestJS docs a fifth of the graph) for a change to one of its leaves, and moves reports
 * that nothing changed; the parent of the majority is where the touched node sat, and a full
 * rebuild re-optimises globally.
 */
function keepParents(
  below: ReadonlyArray<{ id: string; memberIds: readonly string[] }>,
  previous: ReadonlyArray<Pick<CommunityRecord, 'id' | 'memberIds'>>,
): { placed: string[][]; unplaced: string[] } {
  const parentOfEntity = new Map<string, string>();
  for (const p of previous) for (const id of p.memberIds) parentOfEntity.set(id, p.id);
  const children = new Map<string, string[]>();
  const unplaced: string[] = [];
  for (const c of below) {
    const votes = new Map<string, number>();
    for (const id of c.memberIds) {
      const parent = parentOfEntity.get(id);
      if (parent !== undefined) votes.set(parent, (votes.get(parent) ?? 0) + 1);
    }
    let best: string | undefined;
    for (const [parent, n] of votes) if (best === undefined || n > votes.get(best)! || (n === votes.get(best)! && parent < best)) best = parent;
    if (best === undefined) unplaced.push(c.id);
    else children.set(best, [...(children.get(best) ?? []), c.id]);
  }
  const placed: string[][] = [];
  for (const ids of children.values()) {
    if (ids.length >= 2) placed.push(ids.sort());
    else unplaced.push(...ids);
  }
  return { placed, unplaced };
}

/** The graph of one level's communities: relationships between two of them, weights summed. */
function communityEdges(communities: ReadonlyArray<{ id: string; memberIds: readonly string[] }>, edges: readonly WeightedEdge[]): WeightedEdge[] {
  const communityOf = new Map<string, string>();
  for (const c of communities) for (const member of c.memberIds) communityOf.set(member, c.id);
  const out: WeightedEdge[] = [];
  for (const e of edges) {
    const source = communityOf.get(e.source);
    const target = communityOf.get(e.target);
    if (source !== undefined && target !== undefined && source !== target) out.push({ source, target, weight: e.weight });
  }
  return out;
}
