import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TrellisRepositories, TrellisStore } from '../trellis-store';
import { sqlRepositories } from '../sql/sql-repositories';
import { InProcessMatrices, chunkCandidates, graphCandidates } from '../sql/vector-ranking';
import { availableParallelism } from 'node:os';
import { InMemoryGraph } from './in-memory-graph';
import { InMemoryTextIndex } from './in-memory-text-index';
import { SqliteReadThreads } from './read-threads';
import { SqliteDatabase } from './sqlite-database';
import { sqliteDialect } from './sqlite-dialect';
import { WalCheckpointer } from './wal-checkpointer';
import { migrateSqlite } from './sqlite-schema';

/**
 * The standalone store: one SQLite file (better-sqlite3, WAL mode). Vector search is an exact
 * scan of in-memory matrices, which is fast enough for the corpus sizes one machine indexes;
 * full text an inverted index in memory with BM25 ranking (InMemoryTextIndex).
 */
export class SqliteStore implements TrellisStore {
  readonly repositories: TrellisRepositories;
  private readonly db: Database.Database;
  private readonly sql: SqliteDatabase;
  private readonly checkpointer: WalCheckpointer | null;
  private readonly readThreads: SqliteReadThreads | null;
  private readonly matrices: InProcessMatrices;
  private readonly texts: InMemoryTextIndex;
  private readonly graphs: InMemoryGraph | null;
  private closing = false;

  /** `path` is a file path, or ':memory:' for tests. */
  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = OFF');
    db.pragma('busy_timeout = 5000');
    // Indexing touches rows all over the graph tables: every entity and relationship row holds
    // its embedding (1.5-2 KB), so a chunk's write dirties a page or two per row it mentions,
    // at random places. With SQLite's default 2 MB page cache those pages were read back from
    // the file by the next chunk's write; 64 MB holds the hot part of a graph of tens of
    // thousands of rows, on one connection.
    db.pragma('cache_size = -65536');
    // Checkpoints (pages copied from the WAL into the file, and synced) run on a worker thread
    // (WalCheckpointer). The writer's own, inside a COMMIT, is the fallback: at SQLite's default of
    // 1,000 WAL pages it ran every few chunk writes; at 10,000 (40 MB of WAL) only if the worker
    // falls behind.
    db.pragma('wal_autocheckpoint = 10000');
    migrateSqlite(db);
    this.db = db;
    this.sql = new SqliteDatabase(db);
    // Full-text rankings and matrix reads on read threads (not for ':memory:', which no other connection can open).
    this.readThreads = path === ':memory:' ? null : new SqliteReadThreads(path, this.sql, Math.min(2, availableParallelism()));
    this.matrices = new InProcessMatrices(sqliteDialect.byIdScope, this.readThreads ?? undefined);
    this.texts = new InMemoryTextIndex(this.readThreads ?? undefined);
    // Graphs are read into memory on the read threads; without them (':memory:', tests) the walks read SQL.
    this.graphs = this.readThreads === null ? null : new InMemoryGraph(this.readThreads);
    this.repositories = sqlRepositories(this.sql, { dialect: sqliteDialect, fullText: this.texts, vectors: this.matrices, adjacency: this.graphs ?? undefined });
    this.checkpointer = path === ':memory:' ? null : new WalCheckpointer(path);
  }

  async ping(): Promise<void> {
    await this.sql.rows('SELECT 1');
  }

  /**
   * Loads every knowledge base's chunk, entity and relationship matrices, its full-text index and
   * its graph structure (InMemoryGraph), one after another, as the first search of each would: at
   * 100k chunks that is seconds of reading, on the read threads, that the first query after a
   * restart would otherwise wait for.
   * Stops when the store closes. Without read threads (':memory:') there is nothing to gain and
   * it does nothing.
   */
  async warm(): Promise<void> {
    if (this.readThreads === null) return;
    for (const kb of await this.sql.rows('SELECT tenant_id, id FROM knowledge_bases ORDER BY created_at')) {
      const scope = { tenantId: String(kb.tenant_id), kbId: String(kb.id) };
      for (const q of [chunkCandidates(scope), graphCandidates('entities', scope), graphCandidates('relationships', scope)]) {
        if (this.closing) return;
        await this.matrices.preload(this.sql, q);
      }
      if (this.closing) return;
      await this.texts.preload(this.sql, scope);
      if (this.closing) return;
      await this.graphs?.preload(scope);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.readThreads?.stop();
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}
