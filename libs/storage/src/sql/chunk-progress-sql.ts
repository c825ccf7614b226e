import type { IndexStatus, KbScope } from '@trellis/contracts';
import type { SqlDialect } from './sql-dialect';
import type { SqlSession } from './sql-session';

/**
 * Document completion without counting: `documents.chunks_remaining` holds the chunks of the
 * document's current version that are not yet in the graph. The statements below keep it, the
 * same on both engines, each in the caller's transaction:
 *
 * - it is counted afresh only when chunking writes a version's chunks (in that transaction);
 * - afterwards it moves only when a chunk row changes into 'graphed' (−1) or out of it (+1), in
 *   the transaction of that change, so a replayed chunk, already graphed, leaves it alone;
 * - it is null until the version's chunks are written, and the chunks of an older version
 *   never move it.
 *
 * So the graph writer learns that a document is complete from one row, not from a count over
 * every chunk of the document after each chunk (quadratic per document).
 */

/** Sets the chunk's status, moving its document's counter on a transition into or out of 'graphed'. */
export async function setChunkStatusCounted(d: SqlDialect, tx: SqlSession, scope: KbScope, chunkId: string, status: IndexStatus, error: string | null): Promise<void> {
  const key = [scope.tenantId, scope.kbId, chunkId];
  const transition = status === 'graphed' ? "status <> 'graphed'" : "status = 'graphed'";
  // updated_at tells the sweeper how long the chunk has been waiting in its status.
  const at = d.time(new Date().toISOString());
  const moved = await tx.exec(`UPDATE chunks SET status = ?, error = ?, updated_at = ? WHERE ${d.byIdScope()} AND id = ? AND ${transition}`, [status, error, at, ...key]);
  if (moved === 0) {
    // Already graphed (a replay: nothing to do), or a status change that does not move the counter.
    if (status !== 'graphed') await tx.exec(`UPDATE chunks SET status = ?, error = ?, updated_at = ? WHERE ${d.byIdScope()} AND id = ?`, [status, error, at, ...key]);
    return;
  }
  await tx.exec(
    `UPDATE documents SET chunks_remaining = chunks_remaining ${status === 'graphed' ? '-' : '+'} 1
     WHERE ${d.byIdScope()} AND (id, version) = (SELECT document_id, version FROM chunks WHERE ${d.byIdScope()} AND id = ?)`,
    [scope.tenantId, scope.kbId, ...key],
  );
}

/** The counter of the chunk's document, or null when the chunk is not of the document's current version. */
export async function chunksRemainingOf(d: SqlDialect, tx: SqlSession, scope: KbScope, chunkId: string): Promise<number | null> {
  const [row] = await tx.rows(
    `SELECT d.chunks_remaining AS remaining FROM chunks c JOIN documents d
       ON d.tenant_id = c.tenant_id AND d.kb_id = c.kb_id AND d.id = c.document_id AND d.version = c.version
     WHERE ${d.byIdScope('c')} AND c.id = ?`,
    [scope.tenantId, scope.kbId, chunkId],
  );
  return row?.remaining === null || row?.remaining === undefined ? null : Number(row.remaining);
}

/** Counts the not-yet-graphed chunks of each listed document version that is current; runs in the transaction that wrote them. */
export async function recountChunksRemaining(d: SqlDialect, tx: SqlSession, scope: KbScope, versions: ReadonlyArray<{ documentId: string; version: number }>): Promise<void> {
  for (const { documentId, version } of versions) {
    await tx.exec(
      `UPDATE documents SET chunks_remaining = (
         SELECT COUNT(*) FROM chunks WHERE tenant_id = ? AND kb_id = ? AND document_id = ? AND version = ? AND status <> 'graphed'
       ) WHERE ${d.byIdScope()} AND id = ? AND version = ?`,
      [scope.tenantId, scope.kbId, documentId, version, scope.tenantId, scope.kbId, documentId, version],
    );
  }
}

/** The document versions a batch of chunks belongs to, each once. */
export function versionsOf(chunks: ReadonlyArray<{ documentId: string; version: number }>): Array<{ documentId: string; version: number }> {
  return [...new Map(chunks.map((c) => [`${c.documentId}\u0000${c.version}`, { documentId: c.documentId, version: c.version }])).values()];
}
