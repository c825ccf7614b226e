import { stableId } from '@trellis/contracts';
import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';
import { childrenHashOf, contentHashOf, entitySignatures } from './community-content';
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
   * it is kept with its stored hash, and its members need not be among `entities`.
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
 * and the hierarchy stops at a level that merges nothing. A level-0 community's content hash
 * is of its members' content; a higher one's is of its children's hashes (childrenHashOf).
 *
 * Incremental: a stored level-0 community kept with the same content is kept exactly, and
 * detection runs only on the rest (the members of changed communities and entities in none).
 * With `changedIds`, a stored community holding no changed entity is kept as it is without its
 * members being read: `entities` need only hold the changed communities' members. Above level 0
 * every community keeps the parent it had, a new or split one takes the parent of the majority
 * of its members (keepParents), and detection runs only on communities left without one: the
 * upper levels change along the path of what changed and nowhere else. A parent that keeps
 * children keeps its id, so its other children keep their parent link. With nothing stored
 * this is the full build, and every id derives from level and members.
 */
export function buildHierarchy(input: HierarchyInput): Hierarchy {
  const signatures = entitySignatures(input.entities, input.relationships);
  const entityIds = new Set(input.entities.map((e) => e.id));
  const edges: WeightedEdge[] = input.relationships.map((r) => ({ source: r.sourceId, target: r.targetId, weight: r.weight }));
  const idOf = (level: number, memberIds: readonly string[]) => stableId('community', ...input.idParts, level, [...memberIds].sort().join('\u0000'));
  const previousAt = (level: number) => input.previous.filter((c) => c.level === level);
  const changed = input.changedIds;
  const untouched = (memberIds: readonly string[]) => changed !== undefined && !memberIds.some((id) => changed.has(id));

  const sameContent = (c: { memberIds: readonly string[]; contentHash: string }) =>
    untouched(c.memberIds) || (c.memberIds.every((id) => entityIds.has(id)) && contentHashOf(c.memberIds, signatures) === c.contentHash);
  const kept0 = previousAt(0).filter(sameContent);
  const assigned = new Set(kept0.flatMap((c) => c.memberIds));
  const affected0 = [...entityIds].filter((id) => !assigned.has(id));
  const found0 = louvainGroups(affected0, edges).filter((g) => g.length >= MIN_COMMUNITY_SIZE);
  const levels: LevelCommunity[][] = [
    [
      ...kept0.map((c) => ({ id: idOf(0, c.memberIds), memberIds: [...c.memberIds].sort(), childIds: [], contentHash: c.contentHash })),
      ...found0.map((memberIds) => ({ id: idOf(0, memberIds), memberIds, childIds: [], contentHash: contentHashOf(memberIds, signatures) })),
    ],
  ];
  const redetected = [affected0.length];
  for (let level = 1; level < MAX_COMMUNITY_LEVELS; level++) {
    const below = levels[level - 1]!;
    const stored = previousAt(level);
    const { placed, unplaced } = input.previous.length === 0 ? { placed: [], unplaced: below.map((c) => c.id) } : keepParents(below, stored);
    const found = louvainGroups(unplaced, communityEdges(below, edges), resolutionAt(level)).filter((g) => g.length >= 2);
    if (placed.length + found.length === 0) break;
    const byId = new Map(below.map((c) => [c.id, c]));
    const storedById = new Map(stored.map((c) => [c.id, c]));
    const used = new Set(placed.map((p) => p.parentId));
    const community = (id: string, childIds: string[]): LevelCommunity => {
      const memberIds = childIds.flatMap((child) => byId.get(child)!.memberIds).sort();
      const before = storedById.get(id);
      // A kept parent holding no changed entity has the children it had: its stored hash holds.
      const contentHash = before !== undefined && untouched(memberIds) ? before.contentHash : childrenHashOf(childIds.map((child) => byId.get(child)!.contentHash));
      return { id, memberIds, childIds, contentHash };
    };
    levels.push([
      ...placed.map((p) => community(p.parentId, p.childIds)),
      ...found.map((childIds) => {
        const memberIds = childIds.flatMap((child) => byId.get(child)!.memberIds);
        const id = idOf(level, memberIds);
        // An id is taken by a parent that kept its id while its members moved on: derive another.
        return community(used.has(id) ? stableId(id, 'moved') : id, childIds);
      }),
    ]);
    redetected.push(unplaced.length);
  }

  const parentOf = new Map<string, string>();
  for (const level of levels) for (const c of level) for (const child of c.childIds) parentOf.set(child, c.id);
  const communities = levels.flatMap((level, index) => level.map((c) => ({ ...c, level: index, parentId: parentOf.get(c.id) ?? null })));
  return { communities, redetected };
}

interface LevelCommunity {
  readonly id: string;
  readonly memberIds: string[];
  readonly childIds: string[];
  readonly contentHash: string;
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
): { placed: Array<{ parentId: string; childIds: string[] }>; unplaced: string[] } {
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
  const placed: Array<{ parentId: string; childIds: string[] }> = [];
  for (const [parentId, ids] of children) {
    if (ids.length >= 2) placed.push({ parentId, childIds: ids.sort() });
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
