import type { KbScope, OutboxEvent } from '@trellis/contracts';
import type { PausedChunk } from '../records';
import type { BudgetPauseRepository } from '../repositories/budget-pause.repository';
import { fromSqlTime } from '../row-mappers';
import { appendOutboxEvents } from './outbox-sql';
import { SqlRepository } from './sql-engine';

/** The chunks whose extraction waits for their knowledge base's LLM budget. */
export class SqlBudgetPauses extends SqlRepository implements BudgetPauseRepository {
  async pauseChunk(scope: KbScope, chunk: Omit<PausedChunk, 'pausedAt'>, at = new Date()): Promise<void> {
    const d = this.dialect;
    await this.db.exec(
      `INSERT INTO llm_paused_chunks (tenant_id, kb_id, chunk_id, document_id, version, content_hash, paused_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ${d.onConflictUpdate(`document_id = ${d.inserted('document_id')}, version = ${d.inserted('version')}, content_hash = ${d.inserted('content_hash')}`)}`,
      [scope.tenantId, scope.kbId, chunk.chunkId, chunk.documentId, chunk.version, chunk.contentHash, d.time(at.toISOString())],
    );
  }

  /** Oldest first, at most `limit`. */
  async listPausedChunks(scope: KbScope, limit: number): Promise<PausedChunk[]> {
    const rows = await this.db.rows(
      // An integer literal: not every server accepts a bound LIMIT.
      `SELECT chunk_id, document_id, version, content_hash, paused_at FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? ORDER BY paused_at, chunk_id LIMIT ${Math.max(1, Math.floor(limit))}`,
      [scope.tenantId, scope.kbId],
    );
    return rows.map((r) => ({ chunkId: String(r.chunk_id), documentId: String(r.document_id), version: Number(r.version), contentHash: String(r.content_hash), pausedAt: fromSqlTime(r.paused_at) }));
  }

  async countPausedChunks(scope: KbScope): Promise<number> {
    const [row] = await this.db.rows('SELECT COUNT(*) AS n FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ?', [scope.tenantId, scope.kbId]);
    return Number(row?.n ?? 0);
  }

  /** Knowledge bases with paused chunks, of every tenant (for the process that resumes them). */
  async listScopesWithPausedChunks(): Promise<KbScope[]> {
    const rows = await this.db.rows('SELECT DISTINCT tenant_id, kb_id FROM llm_paused_chunks ORDER BY tenant_id, kb_id');
    return rows.map((r) => ({ tenantId: String(r.tenant_id), kbId: String(r.kb_id) }));
  }

  /** Takes chunks off the paused list; returns how many were on it. */
  async unpauseChunks(scope: KbScope, chunkIds: readonly string[], announce: readonly OutboxEvent[] = []): Promise<number> {
    if (chunkIds.length === 0) return 0;
    return this.db.transaction(async (tx) => {
      const removed = await tx.exec(`DELETE FROM llm_paused_chunks WHERE tenant_id = ? AND kb_id = ? AND chunk_id IN (${chunkIds.map(() => '?').join(', ')})`, [scope.tenantId, scope.kbId, ...chunkIds]);
      await appendOutboxEvents(tx, this.dialect, announce);
      return removed;
    });
  }
}
