import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';

/**
 * Databases of one spec file on the server of TRELLIS_TEST_MYSQL_URL: an admin connection
 * opened before the file's tests, a fresh database per store, and every database it named
 * dropped afterwards. Call inside the suite's describe (it registers the hooks there).
 */
export class TestDatabases {
  readonly names: string[] = [];
  private connection: mysql.Connection | undefined;

  constructor(
    private readonly baseUrl: string,
    options: { dateStrings?: boolean } = {},
  ) {
    beforeAll(async () => {
      const url = new URL(baseUrl);
      this.connection = await mysql.createConnection({
        host: url.hostname,
        port: Number(url.port || 3306),
        user: decodeURIComponent(url.username) || 'root',
        password: decodeURIComponent(url.password),
        ...(options.dateStrings ? { dateStrings: true } : {}),
      });
    });
    afterAll(async () => {
      for (const database of this.names) await this.admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
      await this.admin.end();
    });
  }

  get admin(): mysql.Connection {
    if (this.connection === undefined) throw new Error('the admin connection opens before the tests');
    return this.connection;
  }

  /** The name of the most recent database. */
  get last(): string {
    return this.names[this.names.length - 1]!;
  }

  urlFor(database: string): string {
    const url = new URL(this.baseUrl);
    url.pathname = `/${database}`;
    return url.toString();
  }

  /** A new database name, dropped after the file's tests. */
  newName(): string {
    const name = `trellis_test_${randomBytes(6).toString('hex')}`;
    this.names.push(name);
    return name;
  }
}

/**
 * `describe` for suites on the server of TRELLIS_TEST_MYSQL_URL: without it the suite fails and
 * says so (npm test starts MariaDB and sets it), instead of being skipped unseen.
 */
export function describeOnMysql(name: string, body: () => void): void {
  if (process.env.TRELLIS_TEST_MYSQL_URL) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it('needs TRELLIS_TEST_MYSQL_URL', () => {
      throw new Error('set TRELLIS_TEST_MYSQL_URL=mysql://root@127.0.0.1:4000/ (npm test starts MariaDB and sets it): a test that cannot run fails');
    });
  });
}
