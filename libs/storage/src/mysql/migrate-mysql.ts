import { MysqlStore } from './mysql-store';
import type { MysqlStoreOptions } from './mysql-store';

/**
 * Connects, migrates and disconnects: what `trellis migrate` runs. Resolves to the migration
 * versions applied now (empty when the schema was already current).
 */
export async function migrateMysql(url: string, options: MysqlStoreOptions = {}): Promise<number[]> {
  const store = await MysqlStore.connect(url, { ...options, poolSize: options.poolSize ?? 2 });
  try {
    return await store.migrate();
  } finally {
    await store.close();
  }
}
