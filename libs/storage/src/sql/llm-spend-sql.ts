import type { KbScope, OutboxEvent } from '@trellis/contracts';
import { LLM_PURPOSES } from '../records';
import type { LlmPurpose, LlmSpend, PausedChunk } from '../records';
import { spendDay } from '../kb-llm-budget';
import { fromSqlTime } from '../row-mappers';
import { appendOutboxEvents } from './outbox-sql';
import type { SqlDialect } from './sql-dialect';
import type { SqlDatabase, SqlSession } from './sql-session';

const SPEND_COUNTERS = ['calls', 'input_tokens', 'output_tokens', 'estimated_cost_usd', 'counted_input_tokens'] as const;

/**
 * A knowledge base's LLM spend per UTC day and purpose (what budgets count and estimates learn
 * from), and the chunks whose extraction waits for its budget.
 */
export class SqlLlmSpend {
  constructor(
    private readonly db: SqlDatabase,
    private readonly dialect: SqlDialect,
  ) {}

  /** Adds one piece of work to its day; run inside the transaction that records its usage. */
  async add(tx: SqlSession, scope: KbScope, purpose: LlmPurpose, spend: Omit<LlmSpend, 'countedInputTokens'> & { countedInputTokens?: number }, at: Date): Promise<void> {
    const add = SPEND_COUNTERS.map((c) => `${c} = ${c} + ${this.dialect.inserted(c)}`).join(', ');
    await tx.exec(
      `INSERT INTO llm_spend (tenant_id, kb_id, day, purpose, ${SPEND_COUNTERS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${this.dialect.onConflictUpdate(add)}`,
      [scope.tenantId, scope.kbId, spendDay(at), purpose, spend.calls, spend.inputTokens, spend.outputTokens, spend.estimatedCostUsd, spend.countedInputTokens ?? 0],
    );
  }

  /** Spend per purpose on the days from `fromDay` (YYYY-MM-DD) on; zeros for purposes without any. */
  async since(scope: KbScope, fromDay: string): Promise<Record<LlmPurpose, LlmSpend>> {
    const rows = await this.db.rows(
      `SELECT purpose, COALESCE(SUM(calls), 0) AS calls, COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
         COALESCE(SUM(estimated_cost_usd), 0) AS estimated_cost_usd, COALESCE(SUM(counted_input_tokens), 0) AS counted_input_tokens
       FROM llm_spend WHERE tenant_id = ? AND kb_id = ? AND day >= ? GROUP BY purpose`,
      [scope.tenantId, scope.kbId, fromDay],
    );
    const result = Object.fromEntries(LLM_PURPOSES.map((p) => [p, { calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, countedInputTokens: 0 }])) as Record<LlmPurpose, LlmSpend>;
    for (const r of rows) {
      const purpose = String(r.purpose) as LlmPurpose;
      if (!(purpose in result)) continue;
      result[purpose] = { calls: Number(r.calls), inputTokens: Number(r.input_tokens), outputTokens: Number(r.output_tokens), estimatedCostUsd: Number(r.estimated_cost_usd), countedInputTokens: Number(r.counted_input_tokens) };
    }
    return result;
  }

  async pause(scope: KbScope, chunk: Omit<PausedChunk, 'pausedAt'>, at: Date): Promise<void> {
    await this.db.exec(
      `INSERT INTO llm_paused_chunks (tenant_id, kb_id, chunk_id, document_id, version, content_hash, paused_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ${this.dialect.onConflictUpdate(`document_id = ${this.dialect.inserted('document_id')}, version = ${this.dialect.inserted('version')}, content_hash = ${this.dialect.inserted('content_hash')}`)}`,
      [scope.tenantId, scope.kbId, chunk.chunkId, chunk.documentId, chunk.version, chunk.contentHash, this.dialect.time(at.toISOString())],
    );
  }

  /** Oldest first, at most `limit`. */
  async paused(scope: KbScope, limit: number): Promise<PausedChunk[]> {
    const rows = await this.db.rows(
      // An integer literal: not every server accepts a bound LIMIT.
      `SELECT chunk_id, document_id, version, content_hash, paused_at FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? ORDER BY paused_at, chunk_id LIMIT ${Math.max(1, Math.floor(limit))}`,
      [scope.tenantId, scope.kbId],
    );
    return rows.map((r) => ({ chunkId: String(r.chunk_id), documentId: String(r.document_id), version: Number(r.version), contentHash: String(r.content_hash), pausedAt: fromSqlTime(r.paused_at) }));
  }

  async countPaused(scope: KbScope): Promise<number> {
    const [row] = await this.db.rows('SELECT COUNT(*) AS n FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    return Number(row?.n ?? 0);
  }

  /** Knowledge bases with paused chunks, of every tenant (for the process that resumes them). */
  async scopesWithPaused(): Promise<KbScope[]> {
    const rows = await this.db.rows('SELECT DISTINCT tenant_id, kb_id FROM llm_paused_chunks ORDER BY tenant_id, kb_id');
    return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
  }

  /** Takes chunks off the paused list; returns how many were on it. */
  async unpause(scope: KbScope, chunkIds: readonly string[], announce: readonly OutboxEvent[]): Promise<number> {
    if (chunkIds.length === 0) return 0;
    return this.db.transaction(async (tx) => {
      const removed = await tx.exec(`DELETE FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${chunkIds.map(() => '?').join(', ')})`, [scope.tenantId, scope.kbId, ...chunkIds]);
      await appendOutboxEvents(tx, this.dialect, announce);
      return removed;
    });
  }
}
