import { spendDay } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { LLM_PURPOSES } from '../records';
import type { LlmPurpose, LlmSpend, LlmUsage } from '../records';
import type { LlmUsageRepository } from '../repositories/llm-usage.repository';
import { LLM_USAGE_SUMS, toLlmUsage } from '../llm-budget';
import { usageOf } from './document-progress-sql';
import { SqlRepository } from './sql-engine';

const USAGE_COUNTERS = ['calls', 'input_tokens', 'output_tokens', 'estimated_cost_usd', 'cache_hits'] as const;
const SPEND_COUNTERS = ['calls', 'input_tokens', 'output_tokens', 'estimated_cost_usd', 'counted_input_tokens'] as const;

/**
 * LLM usage per document version, and a knowledge base's spend per UTC day and purpose (what
 * budgets count and estimates learn from).
 */
export class SqlLlmUsage extends SqlRepository implements LlmUsageRepository {
  /** Usage of a document version, and the same work in the knowledge base's spend of the day (calls only). */
  async addLlmUsage(scope: KbScope, documentId: string, version: number, u: LlmUsage & { countedInputTokens?: number }, purpose: LlmPurpose, at = new Date()): Promise<void> {
    const d = this.dialect;
    const add = (counters: readonly string[]) => counters.map((c) => `${c} = ${c} + ${d.inserted(c)}`).join(', ');
    await this.db.transaction(async (tx) => {
      await tx.exec(
        `INSERT INTO llm_usage (tenant_id, kb_id, document_id, version, ${USAGE_COUNTERS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${d.onConflictUpdate(add(USAGE_COUNTERS))}`,
        [scope.tenantId, scope.kbId, documentId, version, u.calls, u.inputTokens, u.outputTokens, u.estimatedCostUsd, u.cacheHits],
      );
      if (u.calls === 0) return;
      await tx.exec(
        `INSERT INTO llm_spend (tenant_id, kb_id, day, purpose, ${SPEND_COUNTERS.join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ${d.onConflictUpdate(add(SPEND_COUNTERS))}`,
        [scope.tenantId, scope.kbId, spendDay(at), purpose, u.calls, u.inputTokens, u.outputTokens, u.estimatedCostUsd, u.countedInputTokens ?? 0],
      );
    });
  }

  async getDocumentLlmUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage> {
    return (await usageOf(this.db, scope, [{ documentId, version }])).get(documentId)!;
  }

  async getKnowledgeBaseLlmUsage(scope: KbScope): Promise<LlmUsage> {
    const [row] = await this.db.rows(`SELECT ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ?`, [scope.tenantId, scope.kbId]);
    return toLlmUsage(row);
  }

  /** Spend per purpose on the days from `fromDay` (YYYY-MM-DD) on; zeros for purposes without any. */
  async getLlmSpend(scope: KbScope, fromDay: string): Promise<Record<LlmPurpose, LlmSpend>> {
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
}
