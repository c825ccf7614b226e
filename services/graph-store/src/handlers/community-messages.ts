import { toEntityMessage } from '@trellis/contracts';
import type { v1 } from '@trellis/contracts';
import type { CommunityRefreshResult } from '@trellis/graph';
import type { CommunityDetail, CommunityList, CommunitySummary } from '../community.service';

export function toCommunityMessage(c: CommunitySummary): v1.Community {
  return {
    id: c.id,
    level: c.level,
    parentId: c.parentId ?? '',
    title: c.title,
    summary: c.summary,
    size: c.size,
    reportKind: c.kind,
    stale: c.stale,
    updatedAt: c.updatedAt,
  };
}

export function toCommunityList(list: CommunityList): v1.ListCommunitiesResponse {
  return {
    communities: list.communities.map(toCommunityMessage),
    unassignedEntities: list.unassignedEntities,
    changedAt: list.changedAt ?? '',
    refreshedAt: list.refreshedAt ?? '',
  };
}

export function toCommunityDetail(detail: CommunityDetail): v1.CommunityDetail {
  return {
    community: toCommunityMessage(detail.community),
    keyFacts: detail.community.keyFacts.map((f) => ({ text: f.text, relationshipId: f.relationshipId, chunkIds: [...f.chunkIds] })),
    members: detail.members.map(toEntityMessage),
    childIds: detail.childIds,
  };
}

export function toRebuildResponse(r: CommunityRefreshResult): v1.RebuildCommunitiesResponse {
  return {
    full: r.full,
    communities: r.communities,
    levels: r.levels,
    unchanged: r.unchanged,
    reportsWritten: r.reportsWritten,
    llmCalls: r.llmCalls,
    removed: r.removed,
    redetected: [...r.redetected],
    durationMs: r.durationMs,
  };
}
