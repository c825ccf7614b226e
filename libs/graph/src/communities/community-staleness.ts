import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';
import { contentHashOf, entitySignatures } from './community-content';

export interface Staleness {
  /** Communities whose members changed (or went) since their report was written. */
  readonly staleIds: ReadonlySet<string>;
  /** Entities of the graph in no stored community. */
  readonly unassigned: number;
}

/** Which stored communities the current graph has moved away from: what the next refresh recomputes. */
export function staleness(
  communities: readonly Pick<CommunityRecord, 'id' | 'memberIds' | 'contentHash'>[],
  entities: readonly CommunityEntity[],
  relationships: readonly CommunityRelationship[],
): Staleness {
  const signatures = entitySignatures(entities, relationships);
  const staleIds = new Set(communities.filter((c) => !c.memberIds.every((id) => signatures.has(id)) || contentHashOf(c.memberIds, signatures) !== c.contentHash).map((c) => c.id));
  const assigned = new Set(communities.flatMap((c) => c.memberIds));
  return { staleIds, unassigned: entities.filter((e) => !assigned.has(e.id)).length };
}
