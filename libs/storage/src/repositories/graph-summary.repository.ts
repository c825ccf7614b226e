import type { KbScope } from '@trellis/contracts';
import type { PendingSummary, SummaryUpdate } from '@trellis/graph';

/** Summaries and embeddings of entities and relationships whose mentions changed. */
export interface GraphSummaryRepository {
  /**
   * Up to `limit` entities and up to `limit` relationships whose mentions changed since their
   * summary and embedding were computed. Until then their description is the plain
   * concatenation of what remains, so no removed text survives meanwhile.
   */
  listPendingSummaries(scope: KbScope, limit: number): Promise<PendingSummary[]>;
  /** Knowledge bases, in every tenant, with pending summaries: what a restart finishes. */
  listScopesWithPendingSummaries(): Promise<KbScope[]>;
  /** Saves summaries and embeddings; skips those whose mentions changed since (hash moved on). Resolves to the number saved. */
  saveSummaries(scope: KbScope, updates: readonly SummaryUpdate[]): Promise<number>;
}
