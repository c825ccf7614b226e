import { toEventSettings } from '@trellis/contracts';
import { randomUUID } from 'node:crypto';
import type { KbScope } from '@trellis/contracts';
import { chunkOutboxEvent } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import type { KnowledgeBaseRecord, TrellisRepositories } from '@trellis/storage';
import type { DocumentIngestionService } from '../document-ingestion.service';
import type { IndexingBacklog } from '../indexing-backlog';
import { planSweep } from './stuck-work-plan';
import type { SweepAction } from './stuck-work-plan';

export interface SweeperOptions {
  /** Work unchanged this long counts as stuck. */
  readonly stuckAfterMs: number;
  /** Re-drives of one document version before it fails. */
  readonly maxRedrives: number;
  /** Items read per sweep of each kind; the rest wait for the next sweep. */
  readonly batchSize: number;
  /** How long one sweep may hold the lease before another process may take it over. */
  readonly leaseMs: number;
  /**
   * True while events that indexing work waits for are still queued (the bus's consumer lag):
   * work unchanged for `stuckAfterMs` is then most likely waiting its turn, not lost, and the
   * sweep waits for the queue to drain. Without it, every sweep re-drives.
   */
  readonly backlog?: IndexingBacklog;
}

/** Where the sweeper reports what it did (metrics and logs). */
export interface SweeperTelemetry {
  redriven(item: 'document' | 'chunk', count: number): void;
  gaveUp(item: 'document' | 'chunk', count: number): void;
  log(fields: Record<string, unknown>, message: string): void;
}

export interface SweepReport {
  readonly documentsRedriven: number;
  readonly chunksRedriven: number;
  readonly documentsFailed: number;
  /** True when the sweep re-drove nothing because indexing events were still queued. */
  readonly deferred?: boolean;
}

/** The store lease one sweeper holds while it sweeps: one process at a time, across every tenant. */
export const SWEEPER_LEASE = 'trellis.sweeper';

/**
 * Re-drives indexing work left in a non-terminal status because its event was lost (written,
 * then a broker outage or a crash before the publish): a document still `pending` gets
 * `document.ingested` again, a chunk still `embedded` or `extracted` gets `chunk.ready` again
 * (extraction answers it from its cache and publishes the `chunk.extracted` that went missing;
 * only extraction knows its cache key). Every stage is idempotent, so re-driving work that was
 * merely slow changes nothing. Failed documents are never re-driven; a version re-driven
 * `maxRedrives` times and still stuck fails with the reason.
 */
export class StuckWorkSweeper {
  private readonly holder = `sweeper-${randomUUID()}`;

  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'documents' | 'chunks' | 'llmBudget'>,
    private readonly outbox: Pick<EventOutbox, 'announce'>,
    private readonly ingestion: Pick<DocumentIngestionService, 'announce'>,
    private readonly options: SweeperOptions,
    private readonly telemetry: SweeperTelemetry,
    private readonly clock: () => number = Date.now,
  ) {}

  /** One sweep under the lease; null when another process holds it. */
  async sweepOnce(): Promise<SweepReport | null> {
    if (this.options.backlog && (await this.options.backlog())) return { documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0, deferred: true };
    const now = this.clock();
    if (!(await this.repos.llmBudget.acquireLease(SWEEPER_LEASE, this.holder, 1, now + this.options.leaseMs, now))) return null;
    try {
      const before = new Date(now - this.options.stuckAfterMs).toISOString();
      const [documents, chunks] = await Promise.all([
        this.repos.documents.listStuckDocuments(before, this.options.batchSize),
        this.repos.chunks.listStuckChunks(before, this.options.batchSize),
      ]);
      const report = { documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0 };
      const kbs = new Map<string, KnowledgeBaseRecord | null>();
      for (const action of planSweep(documents, chunks, this.options.maxRedrives)) {
        if (action.kind === 'give-up') {
          await this.giveUp(action);
          report.documentsFailed++;
        } else if (await this.redrive(action, kbs)) {
          report.documentsRedriven += action.document === null ? 0 : 1;
          report.chunksRedriven += action.chunks.length;
        }
      }
      return report;
    } finally {
      await this.repos.llmBudget.releaseLease(SWEEPER_LEASE, this.holder);
    }
  }

  private async redrive(action: SweepAction, kbs: Map<string, KnowledgeBaseRecord | null>): Promise<boolean> {
    const { scope, documentId, version } = action;
    const kb = await this.knowledgeBase(scope, kbs);
    if (kb === null) return false;
    // Counted first: a publish that fails now is retried by a later sweep, within the cap.
    const count = await this.repos.documents.recordRedrive(scope, documentId, version, action.chunks.map((c) => c.chunkId));
    if (count === null) return false;
    if (action.document !== null) {
      await this.ingestion.announce(scope, { id: documentId, version, contentHash: action.document.contentHash });
      this.telemetry.redriven('document', 1);
    }
    const context = { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId, documentVersion: version, traceparent: '', knowledgeBase: toEventSettings(kb) };
    await this.outbox.announce(action.chunks.map((chunk) => chunkOutboxEvent('chunk.ready', { context, chunkId: chunk.chunkId, contentHash: chunk.contentHash }, scope)));
    if (action.chunks.length > 0) this.telemetry.redriven('chunk', action.chunks.length);
    this.telemetry.log(
      { tenant: scope.tenantId, kb: scope.kbId, document: documentId, version, redrive: count, pending: action.document !== null, chunks: action.chunks.map((c) => `${c.chunkId}:${c.status}`) },
      'sweeper re-drove stuck indexing work',
    );
    return true;
  }

  private async giveUp(action: SweepAction): Promise<void> {
    const { scope, documentId, version, reason } = action;
    for (const chunk of action.chunks) await this.repos.chunks.setChunkStatus(scope, chunk.chunkId, 'failed', reason);
    await this.repos.documents.setDocumentStatus(scope, documentId, version, 'failed', reason);
    this.telemetry.gaveUp(action.document !== null ? 'document' : 'chunk', action.document !== null ? 1 : action.chunks.length);
    this.telemetry.log({ tenant: scope.tenantId, kb: scope.kbId, document: documentId, version, reason }, 'sweeper gave up on stuck indexing work');
  }

  private async knowledgeBase(scope: KbScope, kbs: Map<string, KnowledgeBaseRecord | null>): Promise<KnowledgeBaseRecord | null> {
    const key = `${scope.tenantId}\u0000${scope.kbId}`;
    if (!kbs.has(key)) kbs.set(key, await this.repos.knowledgeBases.findKnowledgeBase(scope, scope.kbId));
    return kbs.get(key) ?? null;
  }
}
