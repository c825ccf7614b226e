import type { IndexStatus, KbScope } from '@trellis/contracts';
import type { StuckChunk, StuckDocument } from '../repositories/stuck-work';
import { CURRENT_CHUNKS, fromSqlTime } from '../row-mappers';
import type { SqlEngine } from './sql-engine';
import { execWhereIn } from './sql-session';
import type { SqlDatabase } from './sql-session';

/**
 * What the sweeper finds and records, across every tenant (it is a process-wide job): work
 * whose status has not changed since a cut-off. Oldest first, so a capped sweep takes the
 * longest waiting first.
 */
export class SqlStuckWork {
  constructor(
    private readonly db: SqlDatabase,
    private readonly engine: SqlEngine,
  ) {}

  /** Documents still `pending` (never chunked) whose row has not changed since `before`. */
  async listStuckDocuments(before: string, limit: number): Promise<StuckDocument[]> {
    const rows = await this.db.rows(
      `SELECT tenant_id, kb_id, id, version, status, content_hash, redrive_count, updated_at FROM documents
       WHERE status = 'pending' AND updated_at < ? ORDER BY updated_at, tenant_id, kb_id, id LIMIT ?`,
      [this.engine.dialect.time(before), limit],
    );
    return rows.map((r) => ({
      tenantId: String(r.tenant_id),
      kbId: String(r.kb_id),
      documentId: String(r.id),
      version: Number(r.version),
      status: String(r.status) as IndexStatus,
      contentHash: String(r.content_hash),
      redriveCount: Number(r.redrive_count),
      updatedAt: fromSqlTime(r.updated_at),
    }));
  }

  /**
   * Chunks of current versions waiting for extraction or the graph (`embedded`, `extracted`)
   * unchanged since `before`, of documents that have not failed.
   */
  async listStuckChunks(before: string, limit: number): Promise<StuckChunk[]> {
    const rows = await this.db.rows(
      `SELECT c.tenant_id AS tenant_id, c.kb_id AS kb_id, c.id AS id, c.document_id AS document_id, c.version AS version, c.status AS status,
              c.content_hash AS content_hash, c.updated_at AS updated_at, d.redrive_count AS redrive_count
       FROM ${CURRENT_CHUNKS}
       WHERE c.status IN ('embedded', 'extracted') AND c.updated_at < ? AND d.status NOT IN ('failed', 'graphed')
         AND NOT EXISTS (SELECT 1 FROM llm_paused_chunks p WHERE p.tenant_id = c.tenant_id AND p.kb_id = c.kb_id AND p.chunk_id = c.id)
       ORDER BY c.updated_at, c.tenant_id, c.kb_id, c.id LIMIT ?`,
      [this.engine.dialect.time(before), limit],
    );
    return rows.map((r) => ({
      tenantId: String(r.tenant_id),
      kbId: String(r.kb_id),
      chunkId: String(r.id),
      documentId: String(r.document_id),
      version: Number(r.version),
      status: String(r.status) as IndexStatus,
      contentHash: String(r.content_hash),
      redriveCount: Number(r.redrive_count),
      updatedAt: fromSqlTime(r.updated_at),
    }));
  }

  /**
   * Counts one re-drive of the document version and restarts the wait of it and of the listed
   * chunks. Resolves to the version's re-drives so far, or null when the version is no longer
   * current or has finished meanwhile (nothing to re-drive).
   */
  recordRedrive(scope: KbScope, documentId: string, version: number, chunkIds: readonly string[]): Promise<number | null> {
    const d = this.engine.dialect;
    const at = d.time(new Date().toISOString());
    return this.db.transaction(async (tx) => {
      const moved = await tx.exec(
        `UPDATE documents SET redrive_count = redrive_count + 1, updated_at = ?
         WHERE ${d.byIdScope()} AND id = ? AND version = ? AND status NOT IN ('graphed', 'failed')`,
        [at, scope.tenantId, scope.kbId, documentId, version],
      );
      if (moved === 0) return null;
      // In id order, the order chunk writes lock in.
      await execWhereIn(tx, (m) => `UPDATE chunks SET updated_at = ? WHERE ${d.byIdScope()} AND id IN (${m})`, [at, scope.tenantId, scope.kbId], [...chunkIds].sort());
      const [row] = await tx.rows(`SELECT redrive_count FROM documents WHERE ${d.byIdScope()} AND id = ?`, [scope.tenantId, scope.kbId, documentId]);
      return row === undefined ? null : Number(row.redrive_count);
    });
  }
}
