import type { VectorIndex } from '@trellis/vectors';
import type { SqlSession } from '../sql/sql-session';
import { MATRIX_ROOM, loadMatrix, refreshMatrix } from '../sql/vector-ranking';
import type { VectorQuery } from '../sql/vector-ranking';

interface Entry {
  fingerprint: string;
  index: VectorIndex;
}

/**
 * On the blob path (no vector type in the database) every search used to stream every
 * embedding of the knowledge base. This keeps each (table, knowledge base)'s vectors in one
 * in-memory matrix per process, and checks before each use that the rows are still the same
 * ones: a fingerprint of the candidate ids (count and XOR of CRC32s) that an index-only scan
 * computes in milliseconds. Chunk embeddings never change under the same id; entity and
 * relationship embeddings change only with their summary hash and pending flag, which their
 * fingerprint includes — so the same fingerprint means the same vectors, also when another
 * process did the writing. A changed fingerprint refreshes the matrix with the changed rows.
 */
export class BlobVectorCache {
  private readonly entries = new Map<string, Entry>();
  /** The refresh of a matrix under way: one at a time, as a refresh may write into the matrix it starts from. */
  private readonly refreshing = new Map<string, Promise<void>>();

  async index(session: SqlSession, q: VectorQuery): Promise<VectorIndex> {
    const c = q.candidates;
    const key = `${q.name}\u0000${q.scope.tenantId}\u0000${q.scope.kbId}`;
    for (;;) {
      const [stamp] = await session.rows(
        `SELECT COUNT(*) AS n, BIT_XOR(CRC32(${c.fingerprintColumn ?? c.idColumn})) AS x FROM ${c.from} WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL`,
        c.params,
      );
      const fingerprint = `${String(stamp?.n ?? 0)}:${String(stamp?.x ?? 0)}`;
      const cached = this.entries.get(key);
      if (cached?.fingerprint === fingerprint) return cached.index;
      // Another search is refreshing this matrix: wait for it, then look again.
      const underWay = this.refreshing.get(key);
      if (underWay !== undefined) {
        await underWay;
        continue;
      }
      // Another writer changed rows: read only what changed since this process's matrix.
      const index = cached ? refreshMatrix(session, c, cached.index) : loadMatrix(session, c, MATRIX_ROOM);
      const done = index.then(
        (loaded) => void this.entries.set(key, { fingerprint, index: loaded }),
        () => undefined,
      );
      this.refreshing.set(key, done);
      void done.then(() => this.refreshing.delete(key));
      await done;
      return index;
    }
  }
}
