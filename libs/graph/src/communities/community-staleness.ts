import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';
import { contentHashOf, entitySignatures } from './community-content';

export interface Staleness {
  /** Communities whose members changed (or went) since their report was written. */
  readonly staleIds: ReadonlySet<string>;
  /** Entities of the graph in no stored community. */
  readonly unassigned: number;
}

/**
 * Which stored communities the current graph has moved away from: what the next refresh
 * recomputes. A level-0 community is stale when a member went or its members' content hash
 * changed; a higher one when a member went or a community below it is stale (its hash is of
 * its children's, see childrenHashOf). Pass whole branches: an ancestor is judged by its children.
 */
export function staleness(
  communities: readonly Pick<CommunityRecord, 'id' | 'level' | 'parentId' | 'memberIds' | 'contentHash'>[],
  entities: readonly CommunityEntity[],
  relationships: readonly CommunityRelationship[],
): Staleness {
  const signatures = entitySignatures(entities, relationships);
  const staleIds = new Set<string>();
  for (const c of [...communities].sort((a, b) => a.level - b.level)) {
    const gone = !c.memberIds.every((id) => signatures.has(id));
    if (gone || (c.level === 0 ? contentHashOf(c.memberIds, signatures) !== c.contentHash : false)) staleIds.add(c.id);
    if (staleIds.has(c.id) && c.parentId !== null) staleIds.add(c.parentId);
  }
  const assigned = new Set(communities.flatMap((c) => c.memberIds));
  return { staleIds, unassigned: entities.filter((e) => !assigned.has(e.id)).length };
}

/**
 * Staleness read from the change records instead of the graph: while they are whole
 * (CommunityChangeLog.tracked), every entity whose content changed since the last refresh is
 * recorded, so a community (at any level) is stale exactly when it holds a recorded entity.
 * Costs the records and the communities, not a read of the whole graph. (An entity changed and
 * changed back counts as stale here; the refresh finds its hash unchanged and keeps it.)
 */
export function staleFromChanges(communities: readonly Pick<CommunityRecord, 'id' | 'memberIds'>[], changedIds: ReadonlySet<string>): Set<string> {
  return new Set(communities.filter((c) => c.memberIds.some((id) => changedIds.has(id))).map((c) => c.id));
}
