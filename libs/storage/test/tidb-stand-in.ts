import { randomBytes } from 'node:crypto';
import { format } from 'mysql2';
import type mysql from 'mysql2/promise';
import type { StatementTap } from '../src/mysql/mysql-connection';

/**
 * TiDB cannot run on our machines, so its part is played on the real MariaDB: the store takes
 * its TiDB paths with real data, while the statements it writes are recorded exactly as a TiDB
 * server would receive them, for TiDB's own parser to judge (tidb-sql.spec.ts).
 *
 * The stand-in only answers where the two servers differ; everything else MariaDB runs as is:
 * - VECTOR columns are LONGTEXT holding the same '[1,2,3]' text, checked to be a JSON array
 *   and marked so that information_schema.COLUMNS reports them as `vector`, as TiDB does;
 * - VEC_COSINE_DISTANCE and VEC_DIMS are stored functions with TiDB's meaning (NULL for a
 *   zero vector, an error for vectors of different lengths);
 * - information_schema.COLLATIONS lists TiDB's utf8mb4 collations, so the adapter picks
 *   utf8mb4_0900_bin as on TiDB (MariaDB runs the tables under its own binary no-pad one);
 * - ADD VECTOR INDEX fails with ERROR 8200 "TiFlash store count is 0", as on a cluster without
 *   TiFlash — the path every self-managed test cluster takes.
 * With `vectors: false` it plays a TiDB from before vector search: the VEC_* functions do not
 * exist (ERROR 1305, as MariaDB answers), so the adapter keeps embeddings as BLOBs.
 */
export interface StandInOptions {
  vectors: boolean;
}

const VECTOR_MARK = 'tidb stand-in: VECTOR';
/** What TiDB lists for utf8mb4 (new collation framework), plus the binary one. */
const TIDB_COLLATIONS = ['utf8mb4_bin', 'utf8mb4_general_ci', 'utf8mb4_unicode_ci', 'utf8mb4_0900_ai_ci', 'utf8mb4_0900_bin'];
const INFORMATION_SCHEMA_COLUMNS = [
  'TABLE_CATALOG', 'TABLE_SCHEMA', 'TABLE_NAME', 'COLUMN_NAME', 'ORDINAL_POSITION', 'COLUMN_DEFAULT', 'IS_NULLABLE', 'DATA_TYPE',
  'CHARACTER_MAXIMUM_LENGTH', 'CHARACTER_OCTET_LENGTH', 'NUMERIC_PRECISION', 'NUMERIC_SCALE', 'DATETIME_PRECISION', 'CHARACTER_SET_NAME',
  'COLLATION_NAME', 'COLUMN_TYPE', 'COLUMN_KEY', 'EXTRA', 'PRIVILEGES', 'COLUMN_COMMENT', 'IS_GENERATED', 'GENERATION_EXPRESSION',
];

function setupStatements(db: string): string[] {
  const reported = (column: string) => (column === 'DATA_TYPE' || column === 'COLUMN_TYPE' ? `IF(COLUMN_COMMENT = '${VECTOR_MARK}', 'vector', ${column}) AS ${column}` : column);
  return [
    `CREATE DATABASE ${db}`,
    `CREATE VIEW ${db}.COLUMNS AS SELECT ${INFORMATION_SCHEMA_COLUMNS.map(reported).join(', ')} FROM information_schema.COLUMNS`,
    `CREATE TABLE ${db}.COLLATIONS (COLLATION_NAME VARCHAR(64) NOT NULL, CHARACTER_SET_NAME VARCHAR(32) NOT NULL)`,
    `INSERT INTO ${db}.COLLATIONS VALUES ${TIDB_COLLATIONS.map((c) => `('${c}', 'utf8mb4')`).join(', ')}, ('binary', 'binary')`,
    `CREATE FUNCTION ${db}.VEC_DIMS(v LONGTEXT) RETURNS INT DETERMINISTIC RETURN JSON_LENGTH(v)`,
    `CREATE FUNCTION ${db}.VEC_COSINE_DISTANCE(a LONGTEXT, b LONGTEXT) RETURNS DOUBLE DETERMINISTIC
     BEGIN
       DECLARE n INT DEFAULT JSON_LENGTH(a);
       DECLARE i INT DEFAULT 0;
       DECLARE x, y, dot, aa, bb DOUBLE DEFAULT 0;
       IF a IS NULL OR b IS NULL THEN RETURN NULL; END IF;
       IF n <> JSON_LENGTH(b) THEN
         SIGNAL SQLSTATE 'HY000' SET MESSAGE_TEXT = 'vectors have different dimensions';
       END IF;
       WHILE i < n DO
         SET x = JSON_EXTRACT(a, CONCAT('$[', i, ']')), y = JSON_EXTRACT(b, CONCAT('$[', i, ']'));
         SET dot = dot + x * y, aa = aa + x * x, bb = bb + y * y, i = i + 1;
       END WHILE;
       IF aa = 0 OR bb = 0 THEN RETURN NULL; END IF;
       RETURN 1 - dot / SQRT(aa * bb);
     END`,
  ];
}

export class TidbStandIn {
  private constructor(
    private readonly admin: mysql.Connection,
    private readonly db: string,
    private readonly options: StandInOptions,
  ) {}

  /** Creates the stand-in's own database (functions and catalog views) on the server. */
  static async install(admin: mysql.Connection, options: StandInOptions): Promise<TidbStandIn> {
    const db = `trellis_test_tidb_${randomBytes(6).toString('hex')}`;
    for (const statement of setupStatements(db)) await admin.query(statement);
    return new TidbStandIn(admin, db, options);
  }

  async uninstall(): Promise<void> {
    await this.admin.query(`DROP DATABASE IF EXISTS ${this.db}`);
  }

  /** A tap for MysqlStore: records each statement as written, sends MariaDB the stand-in's version. */
  tap(capture: StatementCapture): StatementTap {
    return (sql, params) => {
      capture.record(sql, params);
      return this.translate(sql);
    };
  }

  private translate(sql: string): string {
    if (/^\s*ALTER\s+TABLE\s+\S+\s+ADD\s+VECTOR\s+INDEX\b/i.test(sql)) {
      return "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 8200, MESSAGE_TEXT = 'Unsupported add vector index: TiFlash store count is 0'";
    }
    let translated = sql
      .replace(/\binformation_schema\.(COLUMNS|COLLATIONS)\b/gi, `${this.db}.$1`)
      .replace(/\butf8mb4_0900_bin\b/g, 'utf8mb4_nopad_bin')
      .replace(
        /\b(\w+) VECTOR\b(?:\(\d+\))?(?!\s+(?:INDEX|KEY)\b)( NOT NULL| NULL)?/g,
        (_, column: string, nullability = '') => `${column} LONGTEXT${nullability} COMMENT '${VECTOR_MARK}' CHECK (JSON_TYPE(${column}) = 'ARRAY')`,
      );
    if (this.options.vectors) translated = translated.replace(/\b(VEC_[A-Z0-9_]+)\s*\(/gi, `${this.db}.$1(`);
    return translated;
  }
}

/** One statement as the adapter wrote it and as the server received it (mysql2 binds client-side). */
export interface CapturedStatement {
  sql: string;
  bound: string;
}

/** Each distinct statement text once, bound with the parameters it was first sent with. */
export class StatementCapture {
  private readonly byText = new Map<string, string>();

  record(sql: string, params: readonly unknown[]): void {
    if (!this.byText.has(sql)) this.byText.set(sql, format(sql, params as Parameters<typeof format>[1]));
  }

  get statements(): CapturedStatement[] {
    return [...this.byText].map(([sql, bound]) => ({ sql, bound }));
  }
}
