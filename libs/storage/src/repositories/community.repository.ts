import type { KbScope } from '@trellis/contracts';
import type { CommunityChangeLog, CommunityChanges, CommunityRecord } from '@trellis/graph';

/** When a knowledge base's graph last changed, and when its communities were refreshed from it. */
export interface CommunityState {
  readonly changedAt: string | null;
  readonly refreshedAt: string | null;
}

/** Communities of a knowledge base's entity graph, with their reports and members. */
export interface CommunityRepository {
  /** Every community of the knowledge base (all levels), members and report embeddings included, by level then id. */
  listCommunities(scope: KbScope): Promise<CommunityRecord[]>;
  getCommunity(scope: KbScope, communityId: string): Promise<CommunityRecord | null>;
  /** The communities (every level) that hold any of these entities, whole, by level then id. */
  listCommunitiesOfEntities(scope: KbScope, entityIds: readonly string[]): Promise<CommunityRecord[]>;
  /** Those of these entities that are members of some community (in id order). */
  listAssignedEntities(scope: KbScope, entityIds: readonly string[]): Promise<string[]>;
  /** How many entities of the knowledge base are members of no community. */
  countUnassignedEntities(scope: KbScope): Promise<number>;
  /** How many communities the knowledge base has, and on how many levels. */
  countCommunities(scope: KbScope): Promise<{ communities: number; levels: number }>;
  /** The entities changed since the last refresh (recorded with every graph change), and whether that record is whole. */
  listCommunityChanges(scope: KbScope): Promise<CommunityChangeLog>;
  /**
   * Writes `upserts` (their members as given: only the member rows that differ are written) and removes `removedIds`, in one transaction,
   * removes the change records `consumedChanges` names (those still at that version), and
   * records `refreshedAt` (when the graph they came from was read) as the last refresh.
   */
  saveCommunities(scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void>;
  /** Records that the graph changed at `at` (documents indexed or deleted, an edit): a refresh becomes due. */
  markCommunitiesChanged(scope: KbScope, at: string): Promise<void>;
  /**
   * Knowledge bases, in every tenant, whose communities were built and whose graph changed
   * since their last refresh, quiet since `quietSince`. The first build is asked for
   * explicitly (it may cost an LLM call per community); refreshes follow by themselves.
   */
  listCommunityRefreshesDue(quietSince: string): Promise<KbScope[]>;
  getCommunityState(scope: KbScope): Promise<CommunityState>;
}
