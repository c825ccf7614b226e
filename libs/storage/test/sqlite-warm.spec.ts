import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteReadThreads } from '../src/sqlite/read-threads';
import { SqliteStore } from '../src/sqlite/sqlite-store';

const SETTINGS = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

/** A store on a file with `kbs` knowledge bases of one chunk each. */
async function storeWith(path: string, kbs: number) {
  const store = new SqliteStore(path);
  const scopes = [];
  for (let i = 0; i < kbs; i++) {
    const scope = { tenantId: 't', kbId: (await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: `kb${i}`, description: '', settings: SETTINGS })).id };
    await store.repositories.documents.saveDocumentVersion(scope, { id: `d${i}`, sourceUri: `d${i}`, filename: 'd.txt', mimeType: 'text/plain', contentHash: `d${i}`, version: 1, sizeBytes: 1, metadata: {}, text: '' });
    await store.repositories.chunks.upsertChunks(scope, [{ id: `c${i}`, documentId: `d${i}`, version: 1, ordinal: 0, text: 'text', heading: '', tokenCount: 1, contentHash: `c${i}`, embedding: new Float32Array([1, i]) }]);
    scopes.push(scope);
  }
  return { store, scopes };
}

/** Reads of whole matrices (with their vectors); the full text's stamps go through matrixRows too. */
const matrixLoads = (reads: { mock: { calls: Array<[string, ...unknown[]]> } }) => reads.mock.calls.filter(([sql]) => sql.includes(' AS embedding')).length;

describe('SqliteStore.warm', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-warm-'));
  afterEach(() => vi.restoreAllMocks());
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("loads every knowledge base's chunk, entity and relationship matrices on the read threads, so the first search reads none", async () => {
    const { store, scopes } = await storeWith(join(dir, 'a.db'), 2);
    const reads = vi.spyOn(SqliteReadThreads.prototype, 'matrixRows');
    await store.warm();
    expect(matrixLoads(reads)).toBe(6);
    expect((await store.repositories.chunks.searchChunksByVector(scopes[1]!, new Float32Array([1, 1]), 1)).map((h) => h.chunk.id)).toEqual(['c1']);
    expect(matrixLoads(reads)).toBe(6);
    await store.close();
  });

  it('stops when the store closes, without an error', async () => {
    const { store } = await storeWith(join(dir, 'b.db'), 3);
    const reads = vi.spyOn(SqliteReadThreads.prototype, 'matrixRows');
    const warming = store.warm();
    await store.close();
    await expect(warming).resolves.toBeUndefined();
    expect(matrixLoads(reads)).toBeLessThan(9);
  });

  it('does nothing in memory, where there are no read threads', async () => {
    const store = new SqliteStore(':memory:');
    const reads = vi.spyOn(SqliteReadThreads.prototype, 'matrixRows');
    await store.warm();
    expect(reads).not.toHaveBeenCalled();
    await store.close();
  });
});
