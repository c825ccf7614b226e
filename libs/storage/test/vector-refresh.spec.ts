import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import type { KbScope } from '@trellis/contracts';
import { sqlRepositories } from '../src/sql/sql-repositories';
import type { Row, SqlDatabase, SqlSession, SqlValue } from '../src/sql/sql-session';
import { InProcessMatrices, chunkCandidates, loadMatrix, refreshMatrix } from '../src/sql/vector-ranking';
import { InMemoryTextIndex } from '../src/sqlite/in-memory-text-index';
import { SqliteDatabase } from '../src/sqlite/sqlite-database';
import { sqliteDialect } from '../src/sqlite/sqlite-dialect';
import { migrateSqlite } from '../src/sqlite/sqlite-schema';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const DIMENSIONS = 16;

/** A session that counts the embeddings it streams. */
class CountingDatabase implements SqlDatabase {
  embeddingsRead = 0;
  constructor(private readonly inner: SqlDatabase) {}
  rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.inner.rows(sql, params);
  }
  exec(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.inner.exec(sql, params);
  }
  each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    return this.inner.each(sql, params, (row) => {
      if (row.embedding !== undefined) this.embeddingsRead++;
      onRow(row);
    });
  }
  transaction<T>(work: (tx: SqlSession) => Promise<T>): Promise<T> {
    return this.inner.transaction(work);
  }
}

/** The SQLite repositories over a counting session (the test closes the database it opened). */
function countingStore(counter: CountingDatabase) {
  return { repositories: sqlRepositories(counter, { dialect: sqliteDialect, fullText: new InMemoryTextIndex(), vectors: new InProcessMatrices(sqliteDialect.byIdScope) }) };
}

/** A deterministic unit vector per seed. */
function vector(seed: number): Float32Array {
  const v = Float32Array.from({ length: DIMENSIONS }, (_, i) => Math.sin(seed * 7.3 + i * 1.9));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('in-process vector matrices after writes', () => {
  let db: Database.Database;
  let counter: CountingDatabase;
  let store: ReturnType<typeof countingStore>;
  let scope: KbScope;

  async function addDocument(id: string, seeds: number[]): Promise<void> {
    await store.repositories.documents.saveDocumentVersion(scope, { id, sourceUri: id, filename: id, mimeType: 'text/plain', contentHash: id, version: 1, sizeBytes: 1, metadata: {}, text: id });
    await store.repositories.chunks.upsertChunks(
      scope,
      seeds.map((seed, ordinal) => ({ id: `${id}-c${seed}`, documentId: id, version: 1, ordinal, text: `chunk ${seed}`, heading: '', tokenCount: 2, contentHash: `${id}-${seed}`, embedding: vector(seed) })),
    );
  }

  /** What an exact scan of every current chunk ranks first for the seed's vector. */
  const nearest = async (seed: number, k = 3) => (await store.repositories.chunks.searchChunksByVector(scope, vector(seed), k)).map((h) => h.chunk.id);

  beforeEach(async () => {
    db = new Database(':memory:');
    migrateSqlite(db);
    counter = new CountingDatabase(new SqliteDatabase(db));
    store = countingStore(counter);
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    await addDocument('doc-a', Array.from({ length: 40 }, (_, i) => i));
  });

  afterEach(() => db.close());

  it('reads only the new embeddings on the first search after a write, and finds them', async () => {
    expect((await nearest(5))[0]).toBe('doc-a-c5');
    expect(counter.embeddingsRead).toBe(40);

    await addDocument('doc-b', [100, 101]);
    counter.embeddingsRead = 0;
    expect((await nearest(101))[0]).toBe('doc-b-c101');
    expect(counter.embeddingsRead).toBe(2);
    // Unchanged since: nothing read.
    counter.embeddingsRead = 0;
    expect((await nearest(7))[0]).toBe('doc-a-c7');
    expect(counter.embeddingsRead).toBe(0);
  });

  it('drops the rows of a deleted document without reading any embedding', async () => {
    await addDocument('doc-b', [100, 101]);
    expect((await nearest(100))[0]).toBe('doc-b-c100');
    await store.repositories.documents.deleteDocument(scope, 'doc-b');
    counter.embeddingsRead = 0;
    expect(await nearest(100, 50)).not.toContain('doc-b-c100');
    expect(await nearest(100, 50)).toHaveLength(40);
    expect(counter.embeddingsRead).toBe(0);
  });

  it('ranks after a refresh exactly as a fresh load does', async () => {
    await nearest(1);
    await addDocument('doc-b', [200, 201, 202]);
    await store.repositories.documents.deleteDocument(scope, 'doc-a');
    await addDocument('doc-c', [3, 4]);
    const refreshed = await Promise.all([3, 200, 4, 9].map((seed) => nearest(seed, 5)));
    const fresh = countingStore(new CountingDatabase(new SqliteDatabase(db)));
    const loaded = await Promise.all([3, 200, 4, 9].map(async (seed) => (await fresh.repositories.chunks.searchChunksByVector(scope, vector(seed), 5)).map((h) => h.chunk.id)));
    expect(refreshed).toEqual(loaded);
    expect(refreshed[0]![0]).toBe('doc-c-c3');
  });

  it('writes a refresh into the matrix it starts from where the rows fit, and ranks as a fresh load does', async () => {
    // Enough rows for the matrix to keep them in memory of its own (not JS arrays).
    await addDocument('doc-big', Array.from({ length: 4200 }, (_, i) => 1000 + i));
    const session = new SqliteDatabase(db);
    const candidates = chunkCandidates(scope).candidates;
    const tight = await loadMatrix(session, candidates);
    const roomy = await loadMatrix(session, candidates, 0.25);
    await addDocument('doc-b', [200, 201, 202]);
    // 3 rows more: past the tight matrix's room, within the roomy one's.
    const assembled = await refreshMatrix(session, candidates, tight);
    expect(assembled).not.toBe(tight);
    expect(await refreshMatrix(session, candidates, roomy)).toBe(roomy);
    await store.repositories.documents.deleteDocument(scope, 'doc-a');
    const inPlace = await refreshMatrix(session, candidates, roomy);
    expect(inPlace).toBe(roomy);
    expect(inPlace.size).toBe(4203);
    const loaded = await loadMatrix(session, candidates);
    for (const seed of [200, 1007, 3, 5100]) expect(inPlace.search(vector(seed), 5)).toEqual(loaded.search(vector(seed), 5));
    // The assembled matrix has room for the next refresh.
    const again = await refreshMatrix(session, candidates, assembled);
    expect(again).toBe(assembled);
    for (const seed of [200, 1007, 3, 5100]) expect(again.search(vector(seed), 5)).toEqual(loaded.search(vector(seed), 5));
    await addDocument('doc-c', [300]);
    expect(await refreshMatrix(session, candidates, roomy)).toBe(roomy);
    // (Among 4,200 sinusoids of 16 values, several lie as near vector(300) as its own row.)
    expect(roomy.similarities(vector(300), ['doc-c-c300']).get('doc-c-c300')).toBeGreaterThan(0.99);
    expect(roomy.search(vector(300), 5)).toEqual((await loadMatrix(session, candidates)).search(vector(300), 5));
  });
});

/** A read session whose streamed reads wait until released: a matrix load held in flight. */
class HeldReads implements SqlSession {
  loads = 0;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  constructor(private readonly inner: SqlSession) {}
  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  rows(sql: string, params?: readonly SqlValue[]): Promise<Row[]> {
    return this.inner.rows(sql, params);
  }
  exec(sql: string, params?: readonly SqlValue[]): Promise<number> {
    return this.inner.exec(sql, params);
  }
  async each(sql: string, params: readonly SqlValue[], onRow: (row: Row) => void): Promise<void> {
    this.loads++;
    await this.gate;
    return this.inner.each(sql, params, onRow);
  }
}

/** SQLite repositories in memory whose matrices are read through HeldReads, with one knowledge base. */
async function heldStore() {
  const db = new Database(':memory:');
  migrateSqlite(db);
  const main = new SqliteDatabase(db);
  const reads = new HeldReads(main);
  const repositories = sqlRepositories(main, { dialect: sqliteDialect, fullText: new InMemoryTextIndex(), vectors: new InProcessMatrices(sqliteDialect.byIdScope, reads) });
  const scope = { tenantId: 't', kbId: (await repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS })).id };
  return { db, reads, repositories, scope };
}

describe('in-process vector matrices loaded through read threads', () => {
  it('shares a load among the searches that wait for it, and serves a search after a write from a refresh that follows that load', async () => {
    const { db, reads, repositories, scope } = await heldStore();
    const add = async (id: string, seeds: number[]) => {
      await repositories.documents.saveDocumentVersion(scope, { id, sourceUri: id, filename: id, mimeType: 'text/plain', contentHash: id, version: 1, sizeBytes: 1, metadata: {}, text: id });
      await repositories.chunks.upsertChunks(
        scope,
        seeds.map((seed, ordinal) => ({ id: `${id}-c${seed}`, documentId: id, version: 1, ordinal, text: `chunk ${seed}`, heading: '', tokenCount: 2, contentHash: `${id}-${seed}`, embedding: vector(seed) })),
      );
    };
    const first = async (seed: number) => (await repositories.chunks.searchChunksByVector(scope, vector(seed), 1))[0]?.chunk.id;
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await add('doc-a', Array.from({ length: 40 }, (_, i) => i));

    reads.hold();
    const waiting = [first(5), first(6)];
    await turn();
    expect(reads.loads).toBe(1);
    await add('doc-b', [100]);
    const afterWrite = first(100);
    await turn();
    // The refresh waits for the load it starts from (it may write into that matrix).
    expect(reads.loads).toBe(1);
    reads.release();
    expect(await Promise.all([...waiting, afterWrite])).toEqual(['doc-a-c5', 'doc-a-c6', 'doc-b-c100']);
    // Then the refresh's read of ids and stamps (the held load read after the write: no row changed since).
    expect(reads.loads).toBe(2);
    // The refreshed matrix is kept: no search reads again.
    expect(await first(100)).toBe('doc-b-c100');
    expect(reads.loads).toBe(2);
    db.close();
  });

  it('loads whole matrices one at a time, whichever they are', async () => {
    const { db, reads, repositories, scope } = await heldStore();
    reads.hold();
    const searches = Promise.all([
      repositories.chunks.searchChunksByVector(scope, vector(1), 1),
      repositories.graphReads.searchRelationshipsByVector(scope, vector(1), 1),
      repositories.graphReads.searchEntitiesByVector(scope, vector(1), 1),
    ]);
    await new Promise((resolve) => setImmediate(resolve));
    // The chunks' matrix is being read; the others wait for it.
    expect(reads.loads).toBe(1);
    reads.release();
    expect(await searches).toEqual([[], [], []]);
    expect(reads.loads).toBe(3);
    db.close();
  });
});
