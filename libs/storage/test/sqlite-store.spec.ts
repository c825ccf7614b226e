import { SqliteStore } from '../src/sqlite/sqlite-store';
import { describeStoreContract } from './store-contract';
import { describeLlmBudgetContract } from './llm-budget-contract';
import { describeGraphEditContract } from './graph-edits-contract';

describeStoreContract('SqliteStore', async () => new SqliteStore(':memory:'));
describeLlmBudgetContract('SqliteStore', async () => new SqliteStore(':memory:'));
describeGraphEditContract('SqliteStore', async () => new SqliteStore(':memory:'));
