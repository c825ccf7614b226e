import type { KbScope } from '@trellis/contracts';
import { bufferToVector, interner, stampDigest, VectorIndex } from '@trellis/vectors';
import type { MatrixPrecision, RowListing, RowSlice, VectorIndexFilling } from '@trellis/vectors';
import { CURRENT_CHUNKS, marks } from '../row-mappers';
import { rowsWhereIn } from './sql-session';
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
  /** How a process's matrix of these candidates keeps their vectors (float32 unless said). */
  precision?: MatrixPrecision;
  /**
   * The scores a search returns are exact cosine similarities even from an int8 matrix: it
   * ranks a shortlist on the matrix and scores that again from the stored vectors (nearestOf).
   * For candidates whose scores are compared against a threshold or must order near-equals
   * exactly (entity resolution, chunks); relationships are only ranked and go without.
   */
  exactScores?: boolean;
  /** Column (or expression) the search may be narrowed on: the chunk's document, whether a relationship is retrievable. */
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
      precision: 'int8',
      exactScores: true,
    },
  };
}

/** The group of the relationships retrieval may return: every one but those a user weighted negative. */
export const RETRIEVABLE: ReadonlySet<string> = new Set(['retrievable']);

/**
 * Entities or relationships of the knowledge base. Relationships are grouped by whether
 * retrieval may return them (RETRIEVABLE: weight not negative), so that searching the
 * retrievable ones and scoring any of them share one matrix, the largest a process keeps,
 * instead of holding its vectors twice. The group is in the fingerprint: a weight turned
 * negative changes it, so another process's matrix notices.
 */
export function graphCandidates(table: 'entities' | 'relationships', scope: KbScope): VectorQuery {
  const alias = table === 'entities' ? 'e' : 'r';
  const group = table === 'relationships' ? `CASE WHEN r.weight >= 0 THEN 'retrievable' ELSE 'excluded' END` : undefined;
  return {
    name: table,
    table,
    scope,
    candidates: {
      from: `${table} ${alias}`,
      where: `${alias}.tenant_id = ? AND ${alias}.kb_id = ?`,
      params: [scope.tenantId, scope.kbId],
      idColumn: `${alias}.id`,
      embeddingColumn: `${alias}.embedding`,
      // Summaries are re-embedded under the same id: their hash and pending flag say when.
      fingerprintColumn: `CONCAT(${alias}.id, ${alias}.summary_hash, ${alias}.summary_pending${group ? `, ${group}` : ''})`,
      groupColumn: group,
      // Relationships are the most numerous vectors a process keeps (two to four per chunk) and
      // are only ranked; entity resolution compares scores against a threshold, so an entity
      // search's shortlist is scored again exactly.
      precision: 'int8',
      exactScores: table === 'entities',
    },
  };
}

/** Only the candidates whose group (or, without `column`, id) is one of `values`. */
export function narrowed(c: VectorCandidates, values: readonly string[], column = c.idColumn): VectorCandidates {
  return { ...c, where: `${c.where} AND ${column} IN (${marks(values)})`, params: [...c.params, ...values] };
}

/** What says a candidate's vector changed: its fingerprint column, or its id when rows never change. */
function stampColumn(c: VectorCandidates): string {
  return c.fingerprintColumn ?? c.idColumn;
}

/**
 * Receives a matrix read: `begin` with the number of rows and their dimensions (the first row's:
 * each embedding is cut or padded to it), then the rows in slices of at most MATRIX_SLICE_ROWS.
 * A read that is retried elsewhere (a read thread lost) calls `begin` again and starts over.
 */
export interface MatrixSink {
  begin(count: number, dimensions: number): void;
  /** The slice's vectors are the sink's only during the call: a read thread writes later rows into their buffer. */
  add(slice: RowSlice): void;
}

/** Rows per slice of a matrix read: 6 MB of 384-dimension floats, about 20 ms of storing them. */
export const MATRIX_SLICE_ROWS = 4096;

/** A session that streams `id, stamp[, embedding][, grp]` rows into a MatrixSink itself: the SQLite read threads, off the main thread. */
export interface MatrixRowReader {
  matrixRows(sql: string, params: readonly SqlValue[], sink: MatrixSink): Promise<void>;
}

const isMatrixRowReader = (session: SqlSession): session is SqlSession & MatrixRowReader => typeof (session as Partial<MatrixRowReader>).matrixRows === 'function';

/** What reads the candidates' ids, stamps and groups, and with `embeddings` their vectors (the rows streamRows takes). */
function matrixSql(c: VectorCandidates, embeddings: boolean): string {
  return `SELECT ${c.idColumn} AS id, ${stampColumn(c)} AS stamp${embeddings ? `, ${c.embeddingColumn} AS embedding` : ''}${c.groupColumn ? `, ${c.groupColumn} AS grp` : ''}
     FROM ${c.from} WHERE ${c.where} AND ${c.embeddingColumn} IS NOT NULL`;
}

/** `sql`'s rows (`id, stamp[, embedding][, grp]`) into `sink`: packed on a read thread where the session has them. */
function streamRows(session: SqlSession, sql: string, params: readonly SqlValue[], sink: MatrixSink): Promise<void> {
  return isMatrixRowReader(session) ? session.matrixRows(sql, params, sink) : matrixRowsOf(session, sql, params, sink);
}

/**
 * The ids, stamp digests and groups of `sql`'s rows (`id, stamp[, grp]`), by column: what a
 * refresh compares with what an index holds. At 100k chunks the matrices' refreshes list 340k
 * rows at the first search after a write: read threads digest the stamps (a relationship's is
 * over 100 characters) and send columns, equal groups become one string, and with `heldId` an id
 * the index already holds is kept as its string, so the read's copy is garbage at once.
 */
export async function stampedRows(session: SqlSession, sql: string, params: readonly SqlValue[], heldId: (id: string) => string | undefined = () => undefined): Promise<RowListing> {
  let listing = { ids: [] as string[], digests: new Float64Array(0), groups: [] as string[] };
  const shared = interner();
  await streamRows(session, sql, params, {
    begin: (count) => (listing = { ids: [], digests: new Float64Array(count), groups: [] }),
    add: (slice) =>
      slice.ids.forEach((id, i) => {
        listing.digests[listing.ids.push(heldId(id) ?? id) - 1] = slice.digests[i]!;
        if (slice.groups.length > 0) listing.groups.push(shared(slice.groups[i]!));
      }),
  });
  return listing;
}

/** The rows of `listing` at the positions `keep` picks, in order. */
function pickedRows(listing: RowListing, keep: (position: number) => boolean): RowListing {
  const picked = { ids: [] as string[], digests: new Float64Array(listing.ids.length), groups: [] as string[] };
  listing.ids.forEach((id, i) => {
    if (!keep(i)) return;
    picked.digests[picked.ids.push(id) - 1] = listing.digests[i]!;
    if (listing.groups.length > 0) picked.groups.push(listing.groups[i]!);
  });
  return picked;
}

/**
 * A matrix read from any session (the MySQL family, or SQLite's main connection when no read
 * thread answers): the rows are collected first, as the count is not known before, then handed
 * to `sink` in slices with a turn of the event loop between them.
 */
export async function matrixRowsOf(session: SqlSession, sql: string, params: readonly SqlValue[], sink: MatrixSink): Promise<void> {
  const ids: string[] = [];
  const digests: number[] = [];
  const groups: string[] = [];
  const vectors: Float32Array[] = [];
  await session.each(sql, params, (row) => {
    ids.push(String(row.id));
    digests.push(stampDigest(String(row.stamp)));
    if (row.embedding !== undefined) vectors.push(bufferToVector(row.embedding as Buffer));
    if (row.grp !== undefined) groups.push(String(row.grp));
  });
  const d = vectors[0]?.length ?? 0;
  sink.begin(ids.length, d);
  for (let start = 0; start < ids.length; start += MATRIX_SLICE_ROWS) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const end = Math.min(ids.length, start + MATRIX_SLICE_ROWS);
    const packed = new Float32Array(d > 0 ? (end - start) * d : 0);
    for (let row = start; row < end && d > 0; row++) packed.set(vectors[row]!.subarray(0, d), (row - start) * d);
    sink.add({ ids: ids.slice(start, end), digests: Float64Array.from(digests.slice(start, end)), groups: groups.slice(start, end), vectors: packed });
  }
}

/** Reads every embedding of the candidates into one in-memory matrix. */
export async function loadMatrix(session: SqlSession, c: VectorCandidates, room = 0): Promise<VectorIndex> {
  let filling: VectorIndexFilling | undefined;
  await streamRows(session, matrixSql(c, true), c.params, {
    begin: (count, dimensions) => (filling = VectorIndex.filling(count, dimensions, { precision: c.precision, capacity: Math.ceil(count * (1 + room)) })),
    add: (slice) => filling!.add(slice),
  });
  return filling!.index();
}

/** The candidates' ids, stamp digests and groups (no embeddings), as refreshMatrix compares them with `index`. */
function candidateStamps(session: SqlSession, c: VectorCandidates, index: VectorIndex): Promise<RowListing> {
  return stampedRows(session, matrixSql(c, false), c.params, (id) => index.heldId(id));
}

/**
 * Rows an exact-scored search ranks on an int8 matrix before scoring them again: twice those
 * asked for, and at least 32 more. int8 similarities are within about 0.001 of the exact ones,
 * so a true top-k row falls outside the shortlist only if k + 32 others sit within that of it.
 */
const shortlistFor = (k: number) => Math.max(2 * k, k + 32);

/** How a dialect scopes a lookup by id (SqlDialect.byIdScope): the read of a shortlist's stored vectors. */
export type ByIdScope = (alias?: string) => string;

/**
 * The k candidates of `index` nearest `query`. Where the candidates want exact scores and the
 * matrix is int8, a shortlist ranked on the matrix is scored again from the stored vectors (one
 * read by id of about 60 rows): the scores and their order are then those of a float32 matrix,
 * which holds four times the memory (157 MB for 100k chunks of 384 dimensions, against 39).
 */
export async function nearestOf(session: SqlSession, q: VectorQuery, byIdScope: ByIdScope, index: VectorIndex, query: Float32Array, k: number, groups?: ReadonlySet<string>): Promise<Scored[]> {
  if (!q.candidates.exactScores || index.precision === 'float32') return index.search(query, k, groups);
  const shortlist = index.search(query, shortlistFor(k), groups).map((hit) => hit.item);
  const sql = (m: string) => `SELECT id, embedding FROM ${q.table} WHERE ${byIdScope()} AND embedding IS NOT NULL AND id IN (${m})`;
  const rows = await rowsWhereIn(session, sql, [q.scope.tenantId, q.scope.kbId], shortlist);
  const stored = new Map(rows.map((row) => [String(row.id), bufferToVector(row.embedding as Buffer)]));
  // In the shortlist's order, so that rows of equal score keep the order the matrix gave them.
  const kept = shortlist.filter((id) => stored.has(id));
  return VectorIndex.of(kept, kept.map((id) => stored.get(id)!), { kernel: 'js' }).search(query, k);
}

/** Candidates at most this share changed: past it a full load reads less than the ids plus the changes. */
const REFRESH_LIMIT = 0.5;
const REFRESH_BATCH = 500;
/**
 * Room a kept matrix leaves for rows to come, as a share of its rows: the refreshes after writes
 * fill it in place (VectorIndex.refreshInPlace) until a refresh needs more and a new matrix is
 * assembled with room again. Room never written takes address space, not memory.
 */
export const MATRIX_ROOM = 0.25;

/**
 * The candidates' matrix after writes, built from `previous`: one scan of ids and stamps (no
 * embeddings), then only the embeddings of rows that are new or whose stamp changed; rows gone
 * are dropped. So the first search after a write reads what the write changed, not every
 * vector of the knowledge base again. The rows are written into `previous` itself where they fit
 * (VectorIndex.refreshInPlace), so a caller must not refresh one matrix twice at once (InProcessMatrices
 * refreshes one after the other); else a new matrix is assembled. Past REFRESH_LIMIT changed
 * rows it loads everything.
 */
export async function refreshMatrix(
  session: SqlSession,
  c: VectorCandidates,
  previous: VectorIndex,
  /** How a whole matrix is loaded when that reads less (InProcessMatrices runs them one at a time). */
  loadAll: (c: VectorCandidates) => Promise<VectorIndex> = (all) => loadMatrix(session, all, MATRIX_ROOM),
): Promise<VectorIndex> {
  const rows = await candidateStamps(session, c, previous);
  // `previous` is not touched before refreshInPlace: whether it holds each row is asked once.
  const held = Uint8Array.from(rows.ids, (id, i) => (previous.holds(id, rows.digests[i]!) ? 1 : 0));
  const changed = rows.ids.filter((_, i) => held[i] === 0);
  if (changed.length > rows.ids.length * REFRESH_LIMIT) return loadAll(c);
  const batches: VectorIndex[] = [];
  for (let start = 0; start < changed.length; start += REFRESH_BATCH) batches.push(await loadMatrix(session, narrowed(c, changed.slice(start, start + REFRESH_BATCH))));
  const fresh = new Set(batches.flatMap((b) => b.ids));
  // A row may have changed again between the two reads: it is left out now and found next time.
  const kept = pickedRows(rows, (i) => held[i] === 1 || fresh.has(rows.ids[i]!));
  if (previous.refreshInPlace(kept, batches)) return previous;
  const options = { groups: c.groupColumn ? kept.groups : [], digests: kept.digests.subarray(0, kept.ids.length), capacity: Math.ceil(kept.ids.length * (1 + MATRIX_ROOM)) };
  // New rows first, so a changed row is taken from its batch; null when the vectors changed shape (another embedding model).
  return VectorIndex.assembled(kept.ids, [...batches, previous], options) ?? loadAll(c);
}

/**
 * Exact ranking over matrices kept for the life of the process: right where this process is
 * the database's only writer (the SQLite store). A write to a table marks its matrices stale;
 * the next search refreshes a stale matrix with what changed (refreshMatrix). Matrices are read
 * through `reads` when given (the SQLite store's read threads: at 100k chunks a first load reads
 * 2.5 GB of rows, seconds the event loop would otherwise stand still); searches that ask for a
 * matrix while it loads wait for that load, unless a write came after it began: then a refresh
 * follows it, once it is done (a refresh may write into the matrix it starts from). Whole
 * matrices are loaded one at a time, whichever they are: after an ingest from 20k to 100k
 * passages the first questions loaded chunks, entities and relationships at once, and the
 * slices in flight and the matrices being filled took the server's RSS from 810 to 1,107 MB.
 */
export class InProcessMatrices implements VectorRanking {
  private readonly matrices = new Map<string, { table: EmbeddingTable; kbId: string; index: VectorIndex; stale: boolean; generation: number }>();
  private readonly loading = new Map<string, { generation: number; index: Promise<VectorIndex> }>();
  /** Bumped by every write: a matrix read across a write stays stale. */
  private generation = 0;
  /** The last whole-matrix load asked for: the next one starts when it is done. */
  private lastLoad: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly byIdScope: ByIdScope,
    private readonly reads?: SqlSession,
  ) {}

  /**
   * The shortlist's stored vectors are read through `reads` too, as the matrix is: committed rows,
   * off the thread that answers queries, which meanwhile goes on with the question's other
   * searches (at 100k chunks that read was 0.8 ms of main thread per search, two per hybrid question).
   */
  async nearest(session: SqlSession, q: VectorQuery, query: Float32Array, k: number, groups?: ReadonlySet<string>): Promise<Scored[]> {
    return nearestOf(this.reads ?? session, q, this.byIdScope, await this.matrix(session, q), query, k, groups);
  }

  async similarities(session: SqlSession, q: VectorQuery, query: Float32Array, ids: readonly string[]): Promise<Map<string, number>> {
    return (await this.matrix(session, q)).similarities(query, ids);
  }

  /** Loads (or refreshes) the matrix of these candidates now, as the next search would. */
  async preload(session: SqlSession, q: VectorQuery): Promise<void> {
    await this.matrix(session, q);
  }

  changed(kbId: string, ...tables: EmbeddingTable[]): void {
    this.generation++;
    for (const m of this.matrices.values()) if (m.kbId === kbId && tables.includes(m.table)) m.stale = true;
  }

  private async matrix(session: SqlSession, q: VectorQuery): Promise<VectorIndex> {
    const key = `${q.name}\u0000${q.scope.tenantId}\u0000${q.scope.kbId}`;
    const cached = this.matrices.get(key);
    if (cached !== undefined && !cached.stale) return cached.index;
    const pending = this.loading.get(key);
    if (pending !== undefined && pending.generation === this.generation) return pending.index;
    const generation = this.generation;
    const reads = this.reads ?? session;
    const refresh = () => {
      const latest = this.matrices.get(key);
      return latest ? refreshMatrix(reads, q.candidates, latest.index, (c) => this.loadAlone(reads, c)) : this.loadAlone(reads, q.candidates);
    };
    const index = pending === undefined ? refresh() : pending.index.then(refresh, refresh);
    this.loading.set(key, { generation, index });
    try {
      const loaded = await index;
      // A load that began before another one's (a write between them) never replaces it.
      if ((this.matrices.get(key)?.generation ?? -1) <= generation) {
        this.matrices.set(key, { table: q.table, kbId: q.scope.kbId, index: loaded, stale: generation !== this.generation, generation });
      }
      return loaded;
    } finally {
      if (this.loading.get(key)?.index === index) this.loading.delete(key);
    }
  }

  /** A whole matrix loaded once the whole-matrix loads asked for before it are done. */
  private loadAlone(reads: SqlSession, c: VectorCandidates): Promise<VectorIndex> {
    const load = this.lastLoad.then(() => loadMatrix(reads, c, MATRIX_ROOM));
    this.lastLoad = load.catch(() => undefined);
    return load;
  }
}
