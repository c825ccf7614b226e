import type { LlmBudgetRepository } from '../repositories/llm-budget.repository';
import { freeSlots, takeTokens } from '../llm-budget';
import { SqlRepository } from './sql-engine';

/**
 * The LLM call budget every process of a deployment shares. The bucket row is read in a
 * transaction that locks it (FOR UPDATE, or SQLite's one writer at a time), so concurrent takers
 * queue on it; a lease slot is claimed by a conditional UPDATE, so two processes cannot both win
 * the same slot.
 */
export class SqlLlmBudget extends SqlRepository implements LlmBudgetRepository {
  async takeFromBucket(key: string, amount: number, perMinute: number, nowMs: number, force = false): Promise<number> {
    await this.db.exec(`${this.dialect.insertIgnore} INTO llm_buckets (bucket_key, tokens, updated_ms) VALUES (?, ?, ?)`, [key, perMinute, nowMs]);
    return this.db.transaction(async (tx) => {
      const [row] = await tx.rows(`SELECT tokens, updated_ms FROM llm_buckets WHERE bucket_key = ?${this.dialect.forUpdate}`, [key]);
      const state = row ? { tokens: Number(row.tokens), updatedMs: Number(row.updated_ms) } : null;
      const { next, waitMs } = takeTokens(state, amount, perMinute, nowMs, force);
      await tx.exec('UPDATE llm_buckets SET tokens = ?, updated_ms = ? WHERE bucket_key = ?', [next.tokens, next.updatedMs, key]);
      return waitMs;
    });
  }

  async acquireLease(key: string, holder: string, slots: number, expiresAtMs: number, nowMs: number): Promise<boolean> {
    const rows = await this.db.rows('SELECT slot, holder, expires_ms FROM llm_leases WHERE lease_key = ? AND slot < ?', [key, slots]);
    const { missing, free } = freeSlots(
      rows.map((r) => ({ slot: Number(r.slot), holder: String(r.holder), expiresMs: Number(r.expires_ms) })),
      slots,
      nowMs,
    );
    if (missing.length > 0) {
      const values = missing.map(() => "(?, ?, '', 0)").join(', ');
      await this.db.exec(`${this.dialect.insertIgnore} INTO llm_leases (lease_key, slot, holder, expires_ms) VALUES ${values}`, missing.flatMap((slot) => [key, slot]));
    }
    const claim = "UPDATE llm_leases SET holder = ?, expires_ms = ? WHERE lease_key = ? AND slot = ? AND (holder = '' OR expires_ms <= ?)";
    for (const slot of [...missing, ...free]) {
      if ((await this.db.exec(claim, [holder, expiresAtMs, key, slot, nowMs])) > 0) return true;
    }
    return false;
  }

  async releaseLease(key: string, holder: string): Promise<void> {
    await this.db.exec("UPDATE llm_leases SET holder = '', expires_ms = 0 WHERE lease_key = ? AND holder = ?", [key, holder]);
  }
}
