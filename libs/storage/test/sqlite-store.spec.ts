import { SqliteStore } from '../src/sqlite/sqlite-store';
import { describeStoreContract } from './store-contract';

describeStoreContract('SqliteStore', async () => new SqliteStore(':memory:'));
