import type { VectorIndex } from '@trellis/vectors';
import type { SqlSession } from '../sql/sql-session';
import { loadMatrix, refreshMatrix } from '../sql/vector-ranking';
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

  async index(session: SqlSession, q: VectorQuery): Promise<VectorIndex> {
    const c = q.candidates;
    const key = `${q.name}\u0000${q.scope.tenantId}\u0000${q.scope.kbId}`;
    const [stamp] = await session.rows(
      `SELECT COUNT(*) AS n, BIT_XOR(CRC32(${c.fingerprintColumn ?? c.idColumn})) AS x FROM ${c.from} WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL`,
      c.params,
    );
    const fingerprint = `${String(stamp?.n ?? 0)}:${String(stamp?.x ?? 0)}`;
    const cached = this.entries.get(key);
    if (cached?.fingerprint === fingerprint) return cached.index;
    // Another writer changed rows: read only what changed since this process's matrix.
    const index = cached ? await refreshMatrix(session, c, cached.index) : await loadMatrix(session, c);
    this.entries.set(key, { fingerprint, index });
    return index;
  }
}
