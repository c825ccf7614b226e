import type Database from 'better-sqlite3';
import type { IndexStatus, KbScope } from '@trellis/contracts';

/** The SQLite statements of `documents.chunks_remaining` (see ../chunk-progress.ts); they run inside the caller's transaction. */
export class SqliteChunkProgress {
  constructor(private readonly db: Database.Database) {}

  /** Sets the chunk's status, moving its document's counter on a transition into or out of 'graphed'. */
  setStatus(scope: KbScope, chunkId: string, status: IndexStatus, error: string | null): void {
    const key = [scope.tenantId, scope.kbId, chunkId];
    const transition = status === 'graphed' ? "status <> 'graphed'" : "status = 'graphed'";
    const moved = this.db.prepare(`UPDATE chunks SET status = ?, error = ? WHERE tenant_id = ? AND kb_id = ? AND id = ? AND ${transition}`).run(status, error, ...key).changes;
    if (moved === 0) {
      // Already graphed (a replay: nothing to do), or a status change that does not move the counter.
      if (status !== 'graphed') this.db.prepare('UPDATE chunks SET status = ?, error = ? WHERE tenant_id = ? AND kb_id = ? AND id = ?').run(status, error, ...key);
      return;
    }
    this.db
      .prepare(
        `UPDATE documents SET chunks_remaining = chunks_remaining ${status === 'graphed' ? '-' : '+'} 1
         WHERE tenant_id = ? AND kb_id = ? AND (id, version) = (SELECT document_id, version FROM chunks WHERE tenant_id = ? AND kb_id = ? AND id = ?)`,
      )
      .run(scope.tenantId, scope.kbId, ...key);
  }

  /** The counter of the chunk's document, or null when the chunk is not of the document's current version. */
  remainingOf(scope: KbScope, chunkId: string): number | null {
    const row = this.db
      .prepare(
        `SELECT d.chunks_remaining AS remaining FROM chunks c JOIN documents d ON d.id = c.document_id AND d.version = c.version
         WHERE c.tenant_id = ? AND c.kb_id = ? AND c.id = ?`,
      )
      .get(scope.tenantId, scope.kbId, chunkId) as { remaining: number | null } | undefined;
    return row?.remaining ?? null;
  }

  /** Counts the not-yet-graphed chunks of each listed document version that is current. */
  recount(scope: KbScope, versions: ReadonlyArray<{ documentId: string; version: number }>): void {
    const recount = this.db.prepare(
      `UPDATE documents SET chunks_remaining = (
         SELECT COUNT(*) FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? AND status <> 'graphed'
       ) WHERE tenant_id = ? AND kb_id = ? AND id = ? AND version = ?`,
    );
    for (const { documentId, version } of versions) recount.run(scope.tenantId, scope.kbId, documentId, version, scope.tenantId, scope.kbId, documentId, version);
  }
}
