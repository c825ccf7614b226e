import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { describeStoreContract } from './store-contract';
import { describeConcurrentGraphWritesContract } from './concurrent-graph-writes-contract';
import { describeFullTextContract } from './full-text-contract';
import { describeCommunityContract } from './community-contract';

// On a file the store ranks full text and reads its vector matrices on its read threads, which
// the ':memory:' stores of sqlite-store.spec.ts cannot have: the contracts run again here for them.
const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let stores = 0;
const onFile = async () => new SqliteStore(join(dir, `store-${stores++}.db`));

describeStoreContract('SqliteStore on a file', onFile);
describeConcurrentGraphWritesContract('SqliteStore on a file', onFile);
describeFullTextContract('SqliteStore on a file', onFile);
describeCommunityContract('SqliteStore on a file', onFile);
