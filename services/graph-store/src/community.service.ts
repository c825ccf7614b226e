import { randomUUID } from 'node:crypto';
import { ErrorCode, TrellisError, withinLength } from '@trellis/contracts';
import type { KbScope, TenantScope } from '@trellis/contracts';
import { communityContent, indexGraph, staleFromChanges, staleness } from '@trellis/graph';
import type { CommunityBuilder, CommunityRecord, CommunityRefreshResult } from '@trellis/graph';
import { kbScope, requireKnowledgeBase } from '@trellis/storage';
import type { CommunityState, EntityRecord, TrellisRepositories } from '@trellis/storage';
import type { TokenUsage } from '@trellis/models';

/** A community as listed: the record without members and embedding, and whether it is stale. */
export type CommunitySummary = Omit<CommunityRecord, 'memberIds' | 'embedding'> & { size: number; stale: boolean };

export interface CommunityList extends CommunityState {
  communities: CommunitySummary[];
  unassignedEntities: number;
}

export interface CommunityDetail {
  community: CommunitySummary;
  members: EntityRecord[];
  childIds: string[];
}

/** What refreshes report, for metrics. */
export interface CommunityTelemetry {
  refreshed(knowledgeBase: string, result: CommunityRefreshResult): void;
  /** Communities of a knowledge base, and how many are stale, as last seen. */
  observed(knowledgeBase: string, total: number, stale: number): void;
}

const MAX_ID_CHARS = 256;
const MAX_MEMBERS_SHOWN = 100;
/**
 * Community reports are work of the knowledge base, not of one document: their LLM usage is
 * kept under this document id (version 0), so the knowledge base's usage and cost include it.
 */
export const COMMUNITY_USAGE_DOCUMENT = '';
/** How long a refresh may hold its knowledge base: a holder that crashed frees it after this. */
const REFRESH_LEASE_MS = 60 * 60 * 1000;

/** Reads and rebuilds of a knowledge base's communities (graph-store owns them, as it owns graph writes). */
export class CommunityService {
  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'graphReads' | 'communities' | 'llmBudget' | 'llmUsage'>,
    private readonly builder: CommunityBuilder,
    private readonly telemetry: CommunityTelemetry = { refreshed: () => undefined, observed: () => undefined },
    /** Estimated US dollars of the report calls' usage. */
    private readonly costOf: (usage: TokenUsage) => number = () => 0,
  ) {}

  async list(tenant: TenantScope, knowledgeBase: string): Promise<CommunityList> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const scope = kbScope(kb);
    const [communities, state] = await Promise.all([this.repos.communities.listCommunities(scope), this.repos.communities.getCommunityState(scope)]);
    const { staleIds, unassigned } = await this.staleness(scope, communities);
    this.telemetry.observed(kb.name, communities.length, staleIds.size);
    return { ...state, communities: communities.map((c) => summaryOf(c, staleIds.has(c.id))), unassignedEntities: unassigned };
  }

  async get(tenant: TenantScope, knowledgeBase: string, communityId: string): Promise<CommunityDetail> {
    if (communityId.trim() === '') throw TrellisError.invalid('community_id is required');
    withinLength(communityId, 'community_id', MAX_ID_CHARS);
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const scope = kbScope(kb);
    // The whole list is needed anyway (its children, and staleness judged by branch): the community is read from it.
    const all = await this.repos.communities.listCommunities(scope);
    const community = all.find((c) => c.id === communityId);
    if (community === undefined) throw TrellisError.notFound(`community "${communityId}" not found in knowledge base "${kb.name}"`);
    const { staleIds } = await this.staleness(scope, all);
    // Members ranked by centrality inside the community: its entities and their relationships only.
    const [entities, relationships] = await Promise.all([
      this.repos.graphReads.getEntities(scope, community.memberIds),
      this.repos.graphReads.relationshipsOfEntities(scope, community.memberIds),
    ]);
    const records = new Map(entities.map((e) => [e.id, e]));
    const ranked = communityContent(community.memberIds, indexGraph(entities, relationships)).entities.slice(0, MAX_MEMBERS_SHOWN);
    const children = all.filter((c) => c.parentId === community.id).map((c) => c.id);
    return { community: summaryOf(community, staleIds.has(community.id)), members: ranked.map((e) => records.get(e.id)!), childIds: children };
  }

  /**
   * Which communities are stale, and how many entities are in none: from the change records
   * while they are whole (no graph read), else against the whole graph (a knowledge base whose
   * communities were never refreshed with the records kept).
   */
  private async staleness(scope: KbScope, communities: readonly CommunityRecord[]): Promise<{ staleIds: ReadonlySet<string>; unassigned: number }> {
    const changes = await this.repos.communities.listCommunityChanges(scope);
    if (changes.tracked) {
      const staleIds = staleFromChanges(communities, new Set(changes.marks.map((m) => m.entityId)));
      return { staleIds, unassigned: await this.repos.communities.countUnassignedEntities(scope) };
    }
    const graph = await this.repos.graphReads.exportGraph(scope);
    return staleness(communities, graph.entities, graph.relationships);
  }

  /** A full rebuild, or (`incremental`) a refresh of what changed; both reuse unchanged reports. */
  async rebuild(tenant: TenantScope, knowledgeBase: string, incremental: boolean): Promise<CommunityRefreshResult> {
    const kb = await requireKnowledgeBase(this.repos.knowledgeBases, tenant, knowledgeBase);
    const result = await this.refreshScope(kbScope(kb), kb.name, !incremental);
    if (result === null) throw new TrellisError(ErrorCode.FailedPrecondition, `the communities of knowledge base "${kb.name}" are being refreshed; try again when it is done`);
    return result;
  }

  /** The refresh a quiet knowledge base is due (see CommunityRefreshLoop). */
  async refreshDue(scope: KbScope): Promise<CommunityRefreshResult | null> {
    const kb = await this.repos.knowledgeBases.findKnowledgeBase({ tenantId: scope.tenantId }, scope.kbId);
    return kb === null ? null : this.refreshScope(scope, kb.name, false);
  }

  /**
   * One refresh of a knowledge base at a time across every process (graph-store replicas, an
   * explicit rebuild): a one-slot lease in the shared store. Null when another holds it.
   */
  private async refreshScope(scope: KbScope, name: string, full: boolean): Promise<CommunityRefreshResult | null> {
    const key = `community-refresh:${scope.tenantId}:${scope.kbId}`;
    const holder = randomUUID();
    const now = Date.now();
    if (!(await this.repos.llmBudget.acquireLease(key, holder, 1, now + REFRESH_LEASE_MS, now))) return null;
    try {
      const result = await this.builder.refresh(scope, { full });
      if (result.llmCalls > 0) {
        const usage = { calls: result.llmCalls, ...result.llmUsage, estimatedCostUsd: this.costOf(result.llmUsage), cacheHits: 0 };
        await this.repos.llmUsage.addLlmUsage(scope, COMMUNITY_USAGE_DOCUMENT, 0, usage, 'community');
      }
      this.telemetry.refreshed(name, result);
      // What changed while the refresh ran is stale again; the next refresh (or list) will say so.
      this.telemetry.observed(name, result.communities, 0);
      return result;
    } finally {
      await this.repos.llmBudget.releaseLease(key, holder);
    }
  }
}

function summaryOf(c: CommunityRecord, stale: boolean): CommunitySummary {
  const { memberIds, embedding: _embedding, ...rest } = c;
  return { ...rest, size: memberIds.length, stale };
}
