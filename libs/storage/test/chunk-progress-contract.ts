import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { NewChunk } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, vectorFor } from './store-contract';

function chunk(version: number, ordinal: number, text = `text ${ordinal} of version ${version}`): NewChunk {
  return { id: `d-v${version}-${ordinal}`, documentId: 'd', version, ordinal, text, heading: '', tokenCount: 4, contentHash: contentHash(text), embedding: vectorFor(ordinal + 1) };
}

/** A document of three chunks, one of them graphed: what an upgrade finds mid-ingest. */
export async function inFlightDocument(store: TrellisStore): Promise<KbScope> {
  const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'in-flight', description: '', settings: TEST_KB_SETTINGS });
  const scope = { tenantId: 't', kbId: kb.id };
  await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text: 'three chunks' });
  await store.repositories.chunks.upsertChunks(scope, [0, 1, 2].map((ordinal) => ({ ...chunk(1, ordinal), id: `c${ordinal}` })));
  await store.repositories.chunks.setChunkStatus(scope, 'c0', 'graphed');
  return scope;
}

/**
 * Document completion by counter, for every TrellisStore adapter: markChunkGraphed answers how
 * many chunks of the document's current version are still not graphed, and a replayed chunk
 * (at-least-once delivery) does not count twice.
 */
export function describeChunkProgressContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: chunks remaining per document version`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    async function saveVersion(version: number): Promise<void> {
      await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: `h${version}`, version, sizeBytes: 1, metadata: {}, text: `version ${version}` });
    }

    beforeEach(async () => {
      store = await makeStore();
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'progress', description: '', settings: TEST_KB_SETTINGS });
      scope = { tenantId: 't', kbId: kb.id };
      await saveVersion(1);
      await store.repositories.chunks.upsertChunks(scope, [chunk(1, 0), chunk(1, 1), chunk(1, 2)]);
    });

    afterEach(async () => {
      await store.close();
    });

    it('counts down once per chunk, however often a chunk is replayed', async () => {
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0')).toBe(2);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0')).toBe(2);
      await store.repositories.chunks.setChunkStatus(scope, 'd-v1-1', 'extracted');
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1')).toBe(1);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-2')).toBe(0);
      // The last chunk replayed: still complete, never below zero.
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-2')).toBe(0);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1')).toBe(0);
      expect(await store.repositories.chunks.countChunksByStatus(scope, 'd')).toEqual({ graphed: 3 });
      expect((await store.repositories.chunks.getChunk(scope, 'd-v1-2'))?.status).toBe('graphed');
    });

    it('counts a chunk again when it leaves the graphed status, and once more when it returns', async () => {
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0')).toBe(2);
      await store.repositories.chunks.setChunkStatus(scope, 'd-v1-0', 'failed', 'graph write failed');
      await store.repositories.chunks.setChunkStatus(scope, 'd-v1-0', 'failed', 'graph write failed again');
      expect((await store.repositories.chunks.getChunk(scope, 'd-v1-0'))?.error).toBe('graph write failed again');
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1')).toBe(2);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0')).toBe(1);
    });

    it('keeps the count when chunking is replayed: unchanged graphed chunks stay graphed, changed ones count again', async () => {
      await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0');
      await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1');
      await store.repositories.chunks.upsertChunks(scope, [chunk(1, 0), chunk(1, 1), chunk(1, 2)]);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1')).toBe(1);
      await store.repositories.chunks.upsertChunks(scope, [chunk(1, 0, 'new text of the first chunk'), chunk(1, 1), chunk(1, 2)]);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-2')).toBe(1);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0')).toBe(0);
    });

    it('counts only the current version: chunks of an older one answer null and move nothing', async () => {
      await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-0');
      await saveVersion(2);
      // Before version 2 is chunked its count is unknown, whatever version 1 left behind.
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-1')).toBeNull();
      await store.repositories.chunks.upsertChunks(scope, [chunk(2, 0), chunk(2, 1)]);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v1-2')).toBeNull();
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v2-0')).toBe(1);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'd-v2-1')).toBe(0);
      expect(await store.repositories.chunks.markChunkGraphed(scope, 'missing')).toBeNull();
      expect(await store.repositories.chunks.markChunkGraphed({ tenantId: 'other', kbId: scope.kbId }, 'd-v2-1')).toBeNull();
    });
  });
}
