import type { KbScope } from '@trellis/contracts';
import type { LlmUsage } from '../records';
import { LLM_USAGE_SUMS, freeSlots, takeTokens, toLlmUsage } from '../llm-budget';
import type { PooledSql } from './mysql-session';

/**
 * LLM usage and the call budget every process of a deployment shares. The bucket row is read
 * under FOR UPDATE, so concurrent takers queue on it; a lease slot is claimed by a conditional
 * UPDATE, so two processes cannot both win the same slot.
 */
export class MysqlLlmBudget {
  constructor(private readonly sql: PooledSql) {}

  async addUsage(scope: KbScope, documentId: string, version: number, u: LlmUsage): Promise<void> {
    await this.sql.exec(
      `INSERT INTO llm_usage (tenant_id, kb_id, document_id, version, calls, input_tokens, output_tokens, estimated_cost_usd, cache_hits)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE calls = calls + VALUES(calls), input_tokens = input_tokens + VALUES(input_tokens),
         output_tokens = output_tokens + VALUES(output_tokens), estimated_cost_usd = estimated_cost_usd + VALUES(estimated_cost_usd),
         cache_hits = cache_hits + VALUES(cache_hits)`,
      [scope.tenantId, scope.kbId, documentId, version, u.calls, u.inputTokens, u.outputTokens, u.estimatedCostUsd, u.cacheHits],
    );
  }

  async documentUsage(scope: KbScope, documentId: string, version: number): Promise<LlmUsage> {
    const [row] = await this.sql.rows(`SELECT ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?`, [
      scope.tenantId,
      scope.kbId,
      documentId,
      version,
    ]);
    return toLlmUsage(row);
  }

  async knowledgeBaseUsage(scope: KbScope): Promise<LlmUsage> {
    const [row] = await this.sql.rows(`SELECT ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ?`, [scope.tenantId, scope.kbId]);
    return toLlmUsage(row);
  }

  async takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force: boolean): Promise<number> {
    await this.sql.exec('INSERT IGNORE INTO llm_buckets (bucket_key, tokens, updated_ms) VALUES (?, ?, ?)', [key, perMinute, nowMs]);
    return this.sql.transaction(async (tx) => {
      const [row] = await tx.rows('SELECT tokens, updated_ms FROM llm_buckets WHERE bucket_key = ? FOR UPDATE', [key]);
      const state = row ? { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) } : null;
      const { next, waitMs } = takeTokens(state, amount, perMinute, nowMs, force);
      await tx.exec('UPDATE llm_buckets SET tokens = ?, updated_ms = ? WHERE bucket_key = ?', [next.tokens, next.updatedMs, key]);
      return waitMs;
    });
  }

  async acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean> {
    const rows = await this.sql.rows('SELECT slot, holder, expires_ms FROM llm_leases WHERE lease_key = ? AND slot < ?', [key, slots]);
    const { missing, free } = freeSlots(
      rows.map((r) => ({ slot: Number(r.slot), holder: String(r.holder), expiresMs: Number(r.expires_ms) })),
      slots,
      nowMs,
    );
    if (missing.length > 0) {
      await this.sql.exec(`INSERT IGNORE INTO llm_leases (lease_key, slot, holder, expires_ms) VALUES ${missing.map(() => "(?, ?, '', 0)").join(', ')}`, missing.flatMap((slot) => [key, slot]));
    }
    for (const slot of [...missing, ...free]) {
      const claimed = await this.sql.exec("UPDATE llm_leases SET holder = ?, expires_ms = ? WHERE lease_key = ? AND slot = ? AND (holder = '' OR expires_ms <= ?)", [
        holder,
        expiresAtMs,
        key,
        slot,
        nowMs,
      ]);
      if (claimed > 0) return true;
    }
    return false;
  }

  async releaseLease(key: string, holder: string): Promise<void> {
    await this.sql.exec("UPDATE llm_leases SET holder = '', expires_ms = 0 WHERE lease_key = ? AND holder = ?", [key, holder]);
  }
}
