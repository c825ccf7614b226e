import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { MysqlStore, SqliteStore } from '@trellis/storage';
import type { TrellisStore } from '@trellis/storage';

const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;

/**
 * The stores a graph-store test runs on: SQLite always, and the MySQL adapter (MariaDB or TiDB)
 * when TRELLIS_TEST_MYSQL_URL is set, each MySQL store in a fresh database that `dropDatabases`
 * removes.
 */
export function testStores(): { stores: Array<[string, () => Promise<TrellisStore>]>; dropDatabases: () => Promise<void> } {
  const databases: string[] = [];
  const stores: Array<[string, () => Promise<TrellisStore>]> = [['SqliteStore', async () => new SqliteStore(':memory:')]];
  if (mysqlUrl) {
    stores.push([
      'MysqlStore',
      async () => {
        const url = new URL(mysqlUrl);
        databases.push(`trellis_test_${randomBytes(6).toString('hex')}`);
        url.pathname = `/${databases.at(-1)}`;
        const store = await MysqlStore.connect(url.toString(), { poolSize: 4, logger: { info: () => undefined, warn: () => undefined } });
        await store.migrate();
        return store;
      },
    ]);
  }
  const dropDatabases = async () => {
    if (!mysqlUrl || databases.length === 0) return;
    const admin = await mysql.createConnection(mysqlUrl);
    for (const database of databases.splice(0)) await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  };
  return { stores, dropDatabases };
}
