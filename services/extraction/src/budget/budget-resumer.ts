import { toEventSettings } from '@trellis/contracts';
import { randomUUID } from 'node:crypto';
import { chunkOutboxEvent } from '@trellis/messaging';
import type { EventOutbox } from '@trellis/messaging';
import { readBudgetState } from '@trellis/models';
import type { TrellisRepositories } from '@trellis/storage';
import type { BudgetGate, BudgetTelemetry } from './budget-gate';

/** Chunks one knowledge base resumes per run; a larger backlog resumes over several runs. */
const RESUME_BATCH = 500;
/** One resumer at a time across the deployment. */
export const BUDGET_RESUMER_LEASE = 'trellis.budget-resumer';
const LEASE_MS = 60_000;

export interface ResumeTelemetry extends BudgetTelemetry {
  paused(knowledgeBase: string, chunks: number): void;
  resumed(knowledgeBase: string, chunks: number): void;
}

/**
 * Resumes LLM extraction a knowledge-base budget paused: for every knowledge base with paused
 * chunks whose budget allows again (raised, removed, or a new UTC day or month), takes the
 * chunks off the paused list and announces them on `chunk.ready` again, as chunking did, in one
 * transaction with the outbox: a crash after it delays the events, it cannot lose them.
 */
export class BudgetResumer {
  private readonly holder = `budget-resumer-${randomUUID()}`;

  constructor(
    private readonly repos: Pick<TrellisRepositories, 'knowledgeBases' | 'llmUsage' | 'budgetPauses' | 'llmBudget'>,
    private readonly outbox: Pick<EventOutbox, 'publishCommitted'>,
    private readonly gate: Pick<BudgetGate, 'forget'>,
    private readonly telemetry?: ResumeTelemetry,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** One pass over the paused knowledge bases; returns the chunks resumed (null: another process holds the lease). */
  async resumeOnce(): Promise<number | null> {
    const nowMs = this.clock().getTime();
    if (!(await this.repos.llmBudget.acquireLease(BUDGET_RESUMER_LEASE, this.holder, 1, nowMs + LEASE_MS, nowMs))) return null;
    let resumed = 0;
    try {
      for (const scope of await this.repos.budgetPauses.listScopesWithPausedChunks()) {
        const kb = await this.repos.knowledgeBases.findKnowledgeBase({ tenantId: scope.tenantId }, scope.kbId);
        if (kb === null) continue;
        const state = await readBudgetState(this.repos.llmUsage, scope, kb.settings.llmBudget, this.clock());
        this.telemetry?.budgetRead(kb.name, state);
        if (state.exhausted !== '') {
          this.telemetry?.paused(kb.name, await this.repos.budgetPauses.countPausedChunks(scope));
          continue;
        }
        const chunks = await this.repos.budgetPauses.listPausedChunks(scope, RESUME_BATCH);
        const knowledgeBase = toEventSettings(kb);
        const announcements = chunks.map((chunk) => {
          const context = { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId: chunk.documentId, documentVersion: chunk.version, traceparent: '', knowledgeBase };
          return chunkOutboxEvent('chunk.ready', { context, chunkId: chunk.chunkId, contentHash: chunk.contentHash }, scope);
        });
        await this.repos.budgetPauses.unpauseChunks(scope, chunks.map((c) => c.chunkId), announcements);
        this.gate.forget(scope);
        await this.outbox.publishCommitted(announcements);
        resumed += chunks.length;
        this.telemetry?.resumed(kb.name, chunks.length);
        this.telemetry?.paused(kb.name, await this.repos.budgetPauses.countPausedChunks(scope));
      }
    } finally {
      await this.repos.llmBudget.releaseLease(BUDGET_RESUMER_LEASE, this.holder);
    }
    return resumed;
  }
}
