import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { EntityMentionWrite } from '@trellis/graph';
import type { SqlDatabase } from '../src/sql/sql-session';
import { SqliteReadThreads } from '../src/sqlite/read-threads';
import { SqliteStore } from '../src/sqlite/sqlite-store';
import { TEST_KB_SETTINGS, chunk, describeStoreContract, entity, relationship, saveTestDocument } from './store-contract';
import { describeFullTextContract } from './full-text-contract';
import { describeCommunityContract } from './community-contract';

// On a file the store reads full text, matrices and graph walks on its read threads, which the
// ':memory:' stores of sqlite-store.spec.ts cannot have: the contracts run again here for them.
const dir = mkdtempSync(join(tmpdir(), 'trellis-sqlite-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let stores = 0;
const onFile = async () => new SqliteStore(join(dir, `store-${stores++}.db`));

describeStoreContract('SqliteStore on a file', onFile);
describeFullTextContract('SqliteStore on a file', onFile);
describeCommunityContract('SqliteStore on a file', onFile);

describe('SqliteStore on a file: graph walks on the read threads', () => {
  it('reads mentions and neighbourhoods there, without waiting for a write transaction the store holds open', async () => {
    const store = await onFile();
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
    const scope = { tenantId: 't1', kbId: kb.id };
    const [lovelace, engine] = ['Ada Lovelace', 'Analytical Engine'].map((name) => entity(scope, name, `About ${name}.`)) as [EntityMentionWrite, EntityMentionWrite];
    const rel = relationship(lovelace, engine, 'described', 'Lovelace described the engine in 1843.');
    const c = chunk('d1', 1, 0, 'Ada Lovelace described the Analytical Engine', 1);
    await saveTestDocument(store, scope, 'd1');
    await store.repositories.chunks.upsertChunks(scope, [c]);
    await store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [lovelace, engine], [rel]);
    const threaded = vi.spyOn(SqliteReadThreads.prototype, 'rows');

    // The main connection serializes its transactions: a read there would wait for this one.
    const sql = (store as unknown as { sql: SqlDatabase }).sql;
    let release = () => undefined as void;
    const held = sql.transaction(() => new Promise<void>((resolve) => (release = resolve)));
    const walk = Promise.all([
      store.repositories.graphReads.chunkIdsForEntities(scope, [lovelace.entityId]),
      store.repositories.graphReads.relationshipsOfEntities(scope, [lovelace.entityId]),
      store.repositories.graphReads.entityIdsForChunks(scope, [c.id]),
    ]);
    const answered = await Promise.race([walk.then(() => 'answered'), new Promise((resolve) => setTimeout(() => resolve('waited'), 5_000))]);
    release();
    await held;
    expect(answered).toBe('answered');
    const [mentions, neighbourhood, mentioned] = await walk;
    expect(mentions.get(lovelace.entityId)).toEqual([c.id]);
    expect(neighbourhood.map((r) => r.id)).toEqual([rel.relationshipId]);
    expect(mentioned.get(c.id)?.sort()).toEqual([lovelace.entityId, engine.entityId].sort());
    expect(threaded.mock.calls.length).toBeGreaterThanOrEqual(4);
    threaded.mockRestore();
    await store.close();
  });
});
