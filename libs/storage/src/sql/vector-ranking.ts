import type { KbScope } from '@trellis/contracts';
import { VectorIndex } from '../vector-index';
import { bufferToVector } from '../vector-math';
import { CURRENT_CHUNKS, marks } from '../row-mappers';
import type { SqlSession, SqlValue } from './sql-session';

/** Tables that carry an `embedding` column. */
export type EmbeddingTable = 'chunks' | 'entities' | 'relationships';

/**
 * The rows a vector search ranks. `from` holds the table and its joins and binds no parameters;
 * `where` holds the (tenant-scoped) conditions whose values are `params`.
 */
export interface VectorCandidates {
  from: string;
  where: string;
  params: readonly SqlValue[];
  /** Qualified id column, e.g. `c.id`. */
  idColumn: string;
  /** Qualified embedding column, e.g. `c.embedding`. */
  embeddingColumn: string;
  /** What the blob cache fingerprints to notice changed rows; the id column when rows never change. */
  fingerprintColumn?: string;
  /** Column the search may be narrowed on (the chunk's document). */
  groupColumn?: string;
}

/** One named set of candidates of one knowledge base; the name keys per-process matrices. */
export interface VectorQuery {
  name: string;
  /** The table whose writes change the candidates. */
  table: EmbeddingTable;
  scope: KbScope;
  candidates: VectorCandidates;
}

export interface Scored {
  item: string;
  score: number;
}

/**
 * How a store ranks embeddings by cosine similarity: by the server (TiDB's VEC_COSINE_DISTANCE),
 * or exactly, over per-process matrices of the knowledge base's vectors (BLOB columns).
 */
export interface VectorRanking {
  /** The k candidates nearest `query`, best first; `groups` keeps only rows of those groups. */
  nearest(session: SqlSession, q: VectorQuery, query: Float32Array, k: number, groups?: ReadonlySet<string>): Promise<Scored[]>;
  /** Similarity of `query` to each listed candidate that has an embedding. */
  similarities(session: SqlSession, q: VectorQuery, query: Float32Array, ids: readonly string[]): Promise<Map<string, number>>;
  /** Called after writes to these tables of a knowledge base were committed. */
  changed(kbId: string, ...tables: EmbeddingTable[]): void;
}

/** Current chunks of the knowledge base (their document filter is a group). */
export function chunkCandidates(scope: KbScope): VectorQuery {
  return {
    name: 'chunks',
    table: 'chunks',
    scope,
    candidates: {
      from: CURRENT_CHUNKS,
      where: 'c.tenant_id = ? AND c.kb_id = ?',
      params: [scope.tenantId, scope.kbId],
      idColumn: 'c.id',
      embeddingColumn: 'c.embedding',
      groupColumn: 'c.document_id',
    },
  };
}

/** Entities or relationships of the knowledge base; `retrievable` leaves out relationships a user weighted negative. */
export function graphCandidates(table: 'entities' | 'relationships', scope: KbScope, retrievable = false): VectorQuery {
  const alias = table === 'entities' ? 'e' : 'r';
  return {
    name: retrievable ? `retrievable-${table}` : table,
    table,
    scope,
    candidates: {
      from: `${table} ${alias}`,
      where: `${alias}.tenant_id = ? AND ${alias}.kb_id = ?${retrievable ? ` AND ${alias}.weight >= 0` : ''}`,
      params: [scope.tenantId, scope.kbId],
      idColumn: `${alias}.id`,
      embeddingColumn: `${alias}.embedding`,
      // Summaries are re-embedded under the same id: their hash and pending flag say when.
      fingerprintColumn: `CONCAT(${alias}.id, ${alias}.summary_hash, ${alias}.summary_pending)`,
    },
  };
}

/** Only the candidates whose group (or, without `column`, id) is one of `values`. */
export function narrowed(c: VectorCandidates, values: readonly string[], column = c.idColumn): VectorCandidates {
  return { ...c, where: `${c.where} AND ${column} IN (${marks(values)})`, params: [...c.params, ...values] };
}

/** Reads every embedding of the candidates into one in-memory matrix. */
export async function loadMatrix(session: SqlSession, c: VectorCandidates): Promise<VectorIndex> {
  const ids: string[] = [];
  const vectors: Float32Array[] = [];
  const groups: string[] = [];
  await session.each(
    `SELECT ${c.idColumn} AS id, ${c.embeddingColumn} AS embedding${c.groupColumn ? `, ${c.groupColumn} AS grp` : ''}
     FROM ${c.from} WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL`,
    c.params,
    (row) => {
      ids.push(String(row.id));
      vectors.push(bufferToVector(row.embedding as Buffer));
      if (c.groupColumn) groups.push(String(row.grp));
    },
  );
  return new VectorIndex(ids, vectors, groups);
}

/**
 * Exact ranking over matrices kept for the life of the process and dropped after each write to
 * their table: right where this process is the database's only writer (the SQLite store).
 */
export class InProcessMatrices implements VectorRanking {
  private readonly matrices = new Map<string, { table: EmbeddingTable; kbId: string; index: VectorIndex }>();
  /** Bumped by every write: a matrix loaded across a write is not kept. */
  private generation = 0;

  async nearest(session: SqlSession, q: VectorQuery, query: Float32Array, k: number, groups?: ReadonlySet<string>): Promise<Scored[]> {
    return (await this.matrix(session, q)).search(query, k, groups);
  }

  async similarities(session: SqlSession, q: VectorQuery, query: Float32Array, ids: readonly string[]): Promise<Map<string, number>> {
    return (await this.matrix(session, q)).similarities(query, ids);
  }

  changed(kbId: string, ...tables: EmbeddingTable[]): void {
    this.generation++;
    for (const [key, m] of this.matrices) if (m.kbId === kbId && tables.includes(m.table)) this.matrices.delete(key);
  }

  private async matrix(session: SqlSession, q: VectorQuery): Promise<VectorIndex> {
    const key = `${q.name}\u0000${q.scope.tenantId}\u0000${q.scope.kbId}`;
    const cached = this.matrices.get(key);
    if (cached !== undefined) return cached.index;
    const generation = this.generation;
    const index = await loadMatrix(session, q.candidates);
    if (generation === this.generation) this.matrices.set(key, { table: q.table, kbId: q.scope.kbId, index });
    return index;
  }
}
