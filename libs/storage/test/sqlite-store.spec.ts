import { SqliteStore } from '../src/sqlite/sqlite-store';
import { describeStoreContract } from './store-contract';
import { describeLlmBudgetContract } from './llm-budget-contract';

describeStoreContract('SqliteStore', async () => new SqliteStore(':memory:'));
describeLlmBudgetContract('SqliteStore', async () => new SqliteStore(':memory:'));
