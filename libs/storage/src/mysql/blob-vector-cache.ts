import type { KbScope } from '@trellis/contracts';
import { VectorIndex } from '../vector-index';
import type { SqlSession } from '../sql/sql-session';
import { blobToVector } from './vector-codec';
import type { VectorCandidates } from './vector-sql';

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
 * process did the writing.
 */
export class BlobVectorCache {
  private readonly entries = new Map<string, Entry>();

  async index(session: SqlSession, name: string, scope: KbScope, candidates: VectorCandidates, groupColumn?: string): Promise<VectorIndex> {
    const key = `${name}\u0000${scope.tenantId}\u0000${scope.kbId}`;
    const [stamp] = await session.rows(
      `SELECT COUNT(*) AS n, BIT_XOR(CRC32(${candidates.fingerprintColumn ?? candidates.idColumn})) AS x FROM ${candidates.from} WHERE ${candidates.where} AND ${candidates.embeddingColumn} IS NOT NULL`,
      candidates.params,
    );
    const fingerprint = `${String(stamp?.n ?? 0)}:${String(stamp?.x ?? 0)}`;
    const cached = this.entries.get(key);
    if (cached?.fingerprint === fingerprint) return cached.index;
    const ids: string[] = [];
    const vectors: Float32Array[] = [];
    const groups: string[] = [];
    await session.each(
      `SELECT ${candidates.idColumn} AS id, ${candidates.embeddingColumn} AS embedding${groupColumn ? `, ${groupColumn} AS grp` : ''}
       FROM ${candidates.from} WHERE ${candidates.where} AND ${candidates.embeddingColumn} IS NOT NULL`,
      candidates.params,
      (row) => {
        ids.push(String(row.id));
        vectors.push(blobToVector(row.embedding));
        if (groupColumn) groups.push(String(row.grp));
      },
    );
    const index = new VectorIndex(ids, vectors, groups);
    this.entries.set(key, { fingerprint, index });
    return index;
  }
}
