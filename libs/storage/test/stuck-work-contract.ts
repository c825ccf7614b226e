import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { NewChunk } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, vectorFor } from './store-contract';

const tick = () => new Promise((resolve) => setTimeout(resolve, 25));

function chunk(documentId: string, version: number, ordinal: number): NewChunk {
  const text = `${documentId} v${version} #${ordinal}`;
  return { id: `${documentId}-v${version}-${ordinal}`, documentId, version, ordinal, text, heading: '', tokenCount: 3, contentHash: contentHash(text), embedding: vectorFor(ordinal + 1) };
}

/**
 * What the sweeper finds stuck, for every TrellisStore adapter: work whose status has not changed
 * since a cut-off, failed and finished work never, and re-drives counted per document version.
 */
export function describeStuckWorkContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: stuck indexing work`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    async function saveVersion(id: string, version: number): Promise<void> {
      await store.repositories.documents.saveDocumentVersion(scope, { id, sourceUri: `${id}.txt`, filename: `${id}.txt`, mimeType: 'text/plain', contentHash: `h-${id}-${version}`, version, sizeBytes: 1, metadata: {}, text: `${id} ${version}` });
    }

    beforeEach(async () => {
      store = await makeStore();
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'stuck', description: '', settings: TEST_KB_SETTINGS });
      scope = { tenantId: 't', kbId: kb.id };
    });

    afterEach(async () => {
      await store.close();
    });

    it('lists documents still pending since before the cut-off, oldest first, with their re-drives', async () => {
      await saveVersion('old-pending', 1);
      await tick();
      await saveVersion('older-graphed', 1);
      await store.repositories.documents.setDocumentStatus(scope, 'older-graphed', 1, 'graphed');
      await saveVersion('older-failed', 1);
      await store.repositories.documents.setDocumentStatus(scope, 'older-failed', 1, 'failed', 'dead-lettered');
      await saveVersion('older-chunked', 1);
      await store.repositories.documents.setDocumentStatus(scope, 'older-chunked', 1, 'embedded');
      await saveVersion('second-pending', 1);
      await tick();
      const cutOff = new Date().toISOString();
      await tick();
      await saveVersion('new-pending', 1);

      const stuck = await store.repositories.documents.listStuckDocuments(cutOff, 10);
      expect(stuck.map((d) => d.documentId)).toEqual(['old-pending', 'second-pending']);
      expect(stuck[0]).toMatchObject({ tenantId: 't', kbId: scope.kbId, version: 1, status: 'pending', contentHash: 'h-old-pending-1', redriveCount: 0 });
      expect(Date.parse(stuck[0]!.updatedAt)).toBeLessThan(Date.parse(cutOff));
      expect((await store.repositories.documents.listStuckDocuments(cutOff, 1)).map((d) => d.documentId)).toEqual(['old-pending']);
    });

    it('lists chunks of current versions still embedded or extracted, never of failed documents or old versions', async () => {
      await saveVersion('a', 1);
      await store.repositories.chunks.upsertChunks(scope, [chunk('a', 1, 0), chunk('a', 1, 1), chunk('a', 1, 2), chunk('a', 1, 3)]);
      await store.repositories.documents.setDocumentStatus(scope, 'a', 1, 'embedded');
      await store.repositories.chunks.setChunkStatus(scope, 'a-v1-1', 'extracted');
      await store.repositories.chunks.markChunkGraphed(scope, 'a-v1-2');
      await saveVersion('failed', 1);
      await store.repositories.chunks.upsertChunks(scope, [chunk('failed', 1, 0)]);
      await store.repositories.documents.setDocumentStatus(scope, 'failed', 1, 'failed', 'extraction of a chunk failed');
      await saveVersion('replaced', 1);
      await store.repositories.chunks.upsertChunks(scope, [chunk('replaced', 1, 0)]);
      await saveVersion('replaced', 2);
      await tick();
      const cutOff = new Date().toISOString();
      await tick();
      // A chunk that moved on after the cut-off is busy, not stuck.
      await store.repositories.chunks.setChunkStatus(scope, 'a-v1-3', 'extracted');

      const stuck = await store.repositories.chunks.listStuckChunks(cutOff, 10);
      expect(stuck.map((c) => [c.chunkId, c.status]).sort()).toEqual([['a-v1-0', 'embedded'], ['a-v1-1', 'extracted']]);
      expect(stuck.find((c) => c.chunkId === 'a-v1-0')).toMatchObject({ tenantId: 't', kbId: scope.kbId, documentId: 'a', version: 1, contentHash: contentHash('a v1 #0'), redriveCount: 0 });
      expect(await store.repositories.chunks.listStuckChunks(cutOff, 1)).toHaveLength(1);
      expect(await store.repositories.chunks.listStuckChunks('2000-01-01T00:00:00.000Z', 10)).toEqual([]);
    });

    it('leaves chunks paused by a budget to the budget: they are waiting, not stuck', async () => {
      await saveVersion('a', 1);
      await store.repositories.chunks.upsertChunks(scope, [chunk('a', 1, 0), chunk('a', 1, 1)]);
      await store.repositories.documents.setDocumentStatus(scope, 'a', 1, 'embedded');
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: 'a-v1-1', documentId: 'a', version: 1, contentHash: contentHash('a v1 #1') });
      await tick();
      const cutOff = new Date().toISOString();
      expect((await store.repositories.chunks.listStuckChunks(cutOff, 10)).map((c) => c.chunkId)).toEqual(['a-v1-0']);
      await store.repositories.budgetPauses.unpauseChunks(scope, ['a-v1-1']);
      expect((await store.repositories.chunks.listStuckChunks(cutOff, 10)).map((c) => c.chunkId).sort()).toEqual(['a-v1-0', 'a-v1-1']);
    });

    it('counts re-drives per version, restarts the wait, and refuses finished, failed, replaced or foreign versions', async () => {
      await saveVersion('a', 1);
      await store.repositories.chunks.upsertChunks(scope, [chunk('a', 1, 0), chunk('a', 1, 1)]);
      await store.repositories.documents.setDocumentStatus(scope, 'a', 1, 'embedded');
      await tick();
      const cutOff = new Date().toISOString();
      await tick();
      expect((await store.repositories.chunks.listStuckChunks(cutOff, 10)).map((c) => c.chunkId).sort()).toEqual(['a-v1-0', 'a-v1-1']);

      expect(await store.repositories.documents.recordRedrive(scope, 'a', 1, ['a-v1-0'])).toBe(1);
      // The re-driven chunk waits afresh; the other is still stuck, and carries the count.
      expect(await store.repositories.chunks.listStuckChunks(cutOff, 10)).toEqual([expect.objectContaining({ chunkId: 'a-v1-1', redriveCount: 1 })]);
      expect(await store.repositories.documents.recordRedrive(scope, 'a', 1, ['a-v1-1'])).toBe(2);
      expect(await store.repositories.chunks.listStuckChunks(cutOff, 10)).toEqual([]);
      expect((await store.repositories.documents.getDocument(scope, 'a'))?.status).toBe('embedded');

      expect(await store.repositories.documents.recordRedrive({ tenantId: 'other', kbId: scope.kbId }, 'a', 1, [])).toBeNull();
      expect(await store.repositories.documents.recordRedrive(scope, 'a', 7, [])).toBeNull();
      // A new version starts from zero.
      await saveVersion('a', 2);
      expect(await store.repositories.documents.recordRedrive(scope, 'a', 2, [])).toBe(1);
      await store.repositories.documents.setDocumentStatus(scope, 'a', 2, 'failed', 'gave up');
      expect(await store.repositories.documents.recordRedrive(scope, 'a', 2, [])).toBeNull();
      await saveVersion('g', 1);
      await store.repositories.documents.setDocumentStatus(scope, 'g', 1, 'graphed');
      expect(await store.repositories.documents.recordRedrive(scope, 'g', 1, [])).toBeNull();
      // A pending document re-driven waits afresh too.
      await saveVersion('p', 1);
      await tick();
      const later = new Date().toISOString();
      expect((await store.repositories.documents.listStuckDocuments(later, 10)).map((d) => d.documentId)).toEqual(['p']);
      expect(await store.repositories.documents.recordRedrive(scope, 'p', 1, [])).toBe(1);
      expect(await store.repositories.documents.listStuckDocuments(later, 10)).toEqual([]);
    });
  });
}
