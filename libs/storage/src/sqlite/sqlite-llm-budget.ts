import type Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import type { LlmUsage } from '../records';
import { LLM_USAGE_SUMS, freeSlots, takeTokens, toLlmUsage } from '../llm-budget';

/** LLM usage and the shared call budget of the SQLite store (one process holds the file). */
export class SqliteLlmBudget {
  constructor(private readonly db: Database.Database) {}

  addUsage(scope: KbScope, documentId: string, version: number, u: LlmUsage): void {
    this.db
      .prepare(
        `INSERT INTO llm_usage (tenant_id, kb_id, document_id, version, calls, input_tokens, output_tokens, estimated_cost_usd, cache_hits)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, kb_id, document_id, version) DO UPDATE SET calls = calls + excluded.calls,
           input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
           estimated_cost_usd = estimated_cost_usd + excluded.estimated_cost_usd, cache_hits = cache_hits + excluded.cache_hits`,
      )
      .run(scope.tenantId, scope.kbId, documentId, version, u.calls, u.inputTokens, u.outputTokens, u.estimatedCostUsd, u.cacheHits);
  }

  documentUsage(scope: KbScope, documentId: string, version: number): LlmUsage {
    const row = this.db
      .prepare(`SELECT ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ?`)
      .get(scope.tenantId, scope.kbId, documentId, version) as Record<string, unknown> | undefined;
    return toLlmUsage(row);
  }

  knowledgeBaseUsage(scope: KbScope): LlmUsage {
    const row = this.db.prepare(`SELECT ${LLM_USAGE_SUMS} FROM llm_usage WHERE tenant_id = ? AND kb_id = ?`).get(scope.tenantId, scope.kbId) as
      | Record<string, unknown>
      | undefined;
    return toLlmUsage(row);
  }

  deleteKnowledgeBase(scope: KbScope): void {
    this.db.prepare('DELETE FROM llm_usage WHERE tenant_id = ? AND kb_id = ?').run(scope.tenantId, scope.kbId);
  }

  takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force: boolean): number {
    return this.db.transaction(() => {
      const row = this.db.prepare('SELECT tokens, updated_ms FROM llm_buckets WHERE bucket_key = ?').get(key) as { tokens: number; updated_ms: number } | undefined;
      const { next, waitMs } = takeTokens(row ? { tokens: row.tokens, updatedMs: row.updated_ms } : null, amount, perMinute, nowMs, force);
      this.db
        .prepare('INSERT INTO llm_buckets (bucket_key, tokens, updated_ms) VALUES (?, ?, ?) ON CONFLICT (bucket_key) DO UPDATE SET tokens = excluded.tokens, updated_ms = excluded.updated_ms')
        .run(key, next.tokens, next.updatedMs);
      return waitMs;
    }).immediate();
  }

  acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): boolean {
    return this.db.transaction(() => {
      const rows = this.db.prepare('SELECT slot, holder, expires_ms AS expiresMs FROM llm_leases WHERE lease_key = ? AND slot < ?').all(key, slots) as Array<{
        slot: number;
        holder: string;
        expiresMs: number;
      }>;
      const { missing, free } = freeSlots(rows, slots, nowMs);
      const slot = [...missing, ...free][0];
      if (slot === undefined) return false;
      this.db
        .prepare('INSERT INTO llm_leases (lease_key, slot, holder, expires_ms) VALUES (?, ?, ?, ?) ON CONFLICT (lease_key, slot) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms')
        .run(key, slot, holder, expiresAtMs);
      return true;
    }).immediate();
  }

  releaseLease(key: string, holder: string): void {
    this.db.prepare("UPDATE llm_leases SET holder = '', expires_ms = 0 WHERE lease_key = ? AND holder = ?").run(key, holder);
  }
}
