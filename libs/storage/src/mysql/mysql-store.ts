import type { DataSource } from 'typeorm';
import type { TrellisRepositories, TrellisStore } from '../trellis-store';
import { sqlRepositories } from '../sql/sql-repositories';
import { PooledSql } from './mysql-session';
import { createDataSource, prepareServer } from './mysql-connection';
import type { StatementTap } from './mysql-connection';
import type { ServerCapabilities } from './mysql-capabilities';
import { mysqlDialect } from './mysql-dialect';
import { applyMigrations } from './mysql-migrator';
import { parseMysqlUrl } from './mysql-url';
import type { VectorSql, VectorStorage } from './vector-sql';
import type { SqlEngine } from '../sql/sql-engine';
import { VectorPath } from './vector-path';
import { MysqlVectorRanking } from './vector-search';
import { invertedIndex } from './fulltext-index';
import { stderrStoreLogger } from './store-logger';
import type { StoreLogger } from './store-logger';

export interface MysqlStoreOptions {
  /** Connections in the pool; default 10. */
  poolSize?: number;
  /** Create the database named in the URL when it is missing; default true. */
  createDatabase?: boolean;
  /** Where the store reports its vector path; default JSON lines on stderr. */
  logger?: StoreLogger;
  /** Sees (and may rewrite) every statement sent; tests use it, production leaves it unset. */
  statementTap?: StatementTap;
}

/**
 * The MySQL family's SQL, full text and vector ranking; `vectors` is the store's vector path
 * (TiDB's VECTOR columns or BLOBs), which can change when the schema is first migrated.
 */
export function mysqlEngine(vectors: () => VectorSql): SqlEngine {
  const dialect = mysqlDialect(vectors);
  return { dialect, fullText: invertedIndex, vectors: new MysqlVectorRanking(vectors, dialect.byIdScope) };
}

/**
 * The distributed store, on TiDB or any MySQL-protocol server (MariaDB here and in CI): the shared
 * SQL repositories over a TypeORM pool, checked by the same contract suite as SQLite. Embeddings live in
 * VECTOR columns ranked by the server where the server has them (TiDB), otherwise in BLOBs ranked here.
 */
export class MysqlStore implements TrellisStore {
  readonly repositories: TrellisRepositories;
  private readonly pool: PooledSql;
  private readonly vectorPath: VectorPath;

  private constructor(
    private readonly dataSource: DataSource,
    private readonly database: string,
    private readonly server: ServerCapabilities,
    logger: StoreLogger,
  ) {
    this.pool = new PooledSql(dataSource);
    this.vectorPath = new VectorPath(server, database, logger);
    this.repositories = sqlRepositories(this.pool, mysqlEngine(() => this.vectorPath.sql));
  }

  /** Opens a pool on `mysql://user:pass@host:port/db`, creating the database if missing. */
  static async connect(url: string, options: MysqlStoreOptions = {}): Promise<MysqlStore> {
    const settings = parseMysqlUrl(url);
    const server = await prepareServer(settings, options.createDatabase ?? true, options.statementTap);
    const dataSource = await createDataSource(settings, settings.database, options.poolSize ?? 10, options.statementTap);
    await dataSource.initialize();
    const store = new MysqlStore(dataSource, settings.database, server, options.logger ?? stderrStoreLogger);
    try {
      await store.vectorPath.settle(store.pool);
    } catch (error) {
      await store.close();
      throw error;
    }
    return store;
  }

  /** The server behind the store as OpenTelemetry's `db.system.name` spells it, from the version probed at connect. */
  get databaseSystem(): 'tidb' | 'mariadb' | 'mysql' {
    if (/tidb/i.test(this.server.version)) return 'tidb';
    return /mariadb/i.test(this.server.version) ? 'mariadb' : 'mysql';
  }

  /** How this store keeps and ranks embeddings. */
  get vectorStorage(): VectorStorage {
    return this.vectorPath.sql.storage;
  }

  /**
   * Brings the schema up to date; running it again changes nothing. On TiDB it also tries to
   * build the HNSW indexes still missing. Resolves to the migration versions applied now.
   */
  async migrate(): Promise<number[]> {
    const applied = await applyMigrations(this.pool, this.database, {
      collation: this.server.collation,
      embeddingColumnType: this.vectorPath.sql.embeddingColumnType,
    });
    await this.vectorPath.settle(this.pool);
    await this.vectorPath.ensureIndexes(this.pool);
    return applied;
  }

  async ping(): Promise<void> {
    await this.pool.rows('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.dataSource.isInitialized) await this.dataSource.destroy();
  }
}
