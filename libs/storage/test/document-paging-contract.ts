import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { TrellisStore } from '../src/trellis-store';
import { chunk, eachStoreWithKnowledgeBase, saveTestDocument } from './store-contract';

/**
 * ListDocuments' paging, as every adapter must page: keyset on the id, after a cursor, by
 * status; and the progress of a page's documents, read for all of them at once.
 */
export function describeDocumentPagingContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: document paging contract`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const addDocument = (id: string) => saveTestDocument(store, scope, id);

    it('pages documents in id order, after a cursor and by status, without skipping or repeating any', async () => {
      for (const id of ['d3', 'd1', 'd5', 'd2', 'd4']) await addDocument(id);
      await store.repositories.documents.setDocumentStatus(scope, 'd2', 1, 'failed', 'broken');
      await store.repositories.documents.setDocumentStatus(scope, 'd4', 1, 'failed', 'broken');
      const ids = async (page: Parameters<typeof store.repositories.documents.listDocuments>[1]) => (await store.repositories.documents.listDocuments(scope, page)).map((d) => d.id);
      expect(await ids({ limit: 2 })).toEqual(['d1', 'd2']);
      expect(await ids({ limit: 2, afterId: 'd2' })).toEqual(['d3', 'd4']);
      expect(await ids({ limit: 2, afterId: 'd4' })).toEqual(['d5']);
      expect(await ids({ limit: 2, afterId: 'd5' })).toEqual([]);
      expect(await ids({ limit: 10, status: 'failed' })).toEqual(['d2', 'd4']);
      expect(await ids({ limit: 1, afterId: 'd2', status: 'failed' })).toEqual(['d4']);
      expect(await store.repositories.documents.listDocuments({ tenantId: 'other', kbId: scope.kbId }, { limit: 10 })).toEqual([]);
      // Without a page: every document, in source order.
      expect((await store.repositories.documents.listDocuments(scope)).map((d) => d.sourceUri)).toEqual(['d1.txt', 'd2.txt', 'd3.txt', 'd4.txt', 'd5.txt']);
    });

    it('keeps each document\'s title with its current version and reads the titles of many documents at once', async () => {
      for (const id of ['d1', 'd2']) await addDocument(id);
      await saveTestDocument(store, scope, 'd2', 2);
      expect((await store.repositories.documents.getDocument(scope, 'd1'))?.title).toBe('Title of d1 v1');
      const titles = await store.repositories.documents.documentTitles(scope, ['d2', 'd1', 'd2', 'missing']);
      expect([...titles.entries()].sort()).toEqual([['d1', 'Title of d1 v1'], ['d2', 'Title of d2 v2']]);
      expect((await store.repositories.documents.documentTitles({ tenantId: 'other', kbId: scope.kbId }, ['d1'])).size).toBe(0);
    });

    it('finds the current chunks of the documents a title key names, by index, within a limit', async () => {
      for (const id of ['d1', 'd2', 'd3']) await addDocument(id);
      await saveTestDocument(store, scope, 'd2', 2);
      const ids = { d1: [chunk('d1', 1, 0, 'one', 1), chunk('d1', 1, 1, 'two', 2)], d2old: [chunk('d2', 1, 0, 'old', 3)], d2: [chunk('d2', 2, 0, 'new', 4)], d3: [chunk('d3', 1, 0, 'three', 5)] };
      await store.repositories.chunks.upsertChunks(scope, Object.values(ids).flat());
      const titled = (keys: string[], limit = 10, at = scope) => store.repositories.chunks.chunkIdsOfDocumentsTitled(at, keys, limit);
      // Keys as titleKey makes them: 'Title of d2 v1' is no longer d2's title.
      const pages = await titled(['title of d2 v2', 'title of d1 v1', 'title of d2 v1', 'nothing', '']);
      expect(Object.fromEntries(pages)).toEqual({ 'title of d1 v1': ids.d1.map((c) => c.id), 'title of d2 v2': ids.d2.map((c) => c.id) });
      expect([...(await titled(['title of d1 v1', 'title of d3 v1'], 2)).values()].flat()).toEqual(ids.d1.map((c) => c.id));
      expect((await titled(['title of d1 v1'], 10, { tenantId: 'other', kbId: scope.kbId })).size).toBe(0);
      expect((await titled([])).size).toBe(0);
    });

    it('reads the progress of many document versions at once: current chunks, the version\'s stages and LLM usage', async () => {
      for (const id of ['d1', 'd2', 'd3']) await addDocument(id);
      await saveTestDocument(store, scope, 'd2', 2);
      await store.repositories.chunks.upsertChunks(scope, [chunk('d1', 1, 0, 'one', 1), chunk('d1', 1, 1, 'two', 2), chunk('d2', 1, 0, 'old', 3), chunk('d2', 2, 0, 'new', 4)]);
      await store.repositories.chunks.setChunkStatus(scope, chunk('d1', 1, 1, 'two', 2).id, 'graphed');
      const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
      await store.repositories.documents.recordStage(scope, { documentId: 'd2', version: 1, stage: 'chunking', startedAt: at, finishedAt: at });
      await store.repositories.documents.recordStage(scope, { documentId: 'd2', version: 2, stage: 'extraction', startedAt: at, finishedAt: at });
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 2, { calls: 2, inputTokens: 20, outputTokens: 5, estimatedCostUsd: 0.5, cacheHits: 1 }, 'extraction');
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 1, { calls: 9, inputTokens: 90, outputTokens: 9, estimatedCostUsd: 9, cacheHits: 0 }, 'extraction');
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: chunk('d2', 2, 0, 'new', 4).id, documentId: 'd2', version: 2, contentHash: 'h' });
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: chunk('d2', 1, 0, 'old', 3).id, documentId: 'd2', version: 1, contentHash: 'h' });
      const progress = await store.repositories.documents.listProgress(scope, [
        { documentId: 'd1', version: 1 },
        { documentId: 'd2', version: 2 },
        { documentId: 'd3', version: 1 },
      ]);
      expect([...progress.keys()]).toEqual(['d1', 'd2', 'd3']);
      expect(progress.get('d1')).toMatchObject({ chunkCounts: { embedded: 1, graphed: 1 }, stages: [], llmUsage: { calls: 0 } });
      // Only the asked version: d2's old chunk, stage and usage are not counted.
      expect(progress.get('d2')!.chunkCounts).toEqual({ embedded: 1 });
      expect(progress.get('d2')!.stages.map((s) => s.stage)).toEqual(['extraction']);
      expect(progress.get('d2')!.llmUsage).toEqual({ calls: 2, inputTokens: 20, outputTokens: 5, estimatedCostUsd: 0.5, cacheHits: 1 });
      expect(progress.get('d2')!.pausedChunks).toBe(1);
      expect(progress.get('d3')).toEqual({ chunkCounts: {}, stages: [], llmUsage: { calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, cacheHits: 0 }, pausedChunks: 0 });
      expect(await store.repositories.documents.listProgress(scope, [])).toEqual(new Map());
      expect((await store.repositories.documents.listProgress({ tenantId: 'other', kbId: scope.kbId }, [{ documentId: 'd1', version: 1 }])).get('d1')!.chunkCounts).toEqual({});
    });

    it('reads the indexing progress of the documents asked, in their order, with their current chunks and paused chunks only', async () => {
      for (const id of ['d1', 'd2', 'd3']) await addDocument(id);
      await saveTestDocument(store, scope, 'd2', 2);
      await store.repositories.documents.setDocumentStatus(scope, 'd3', 1, 'failed', 'broken');
      await store.repositories.chunks.upsertChunks(scope, [chunk('d1', 1, 0, 'one', 1), chunk('d1', 1, 1, 'two', 2), chunk('d2', 1, 0, 'old', 3), chunk('d2', 2, 0, 'new', 4)]);
      await store.repositories.chunks.setChunkStatus(scope, chunk('d1', 1, 1, 'two', 2).id, 'graphed');
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: chunk('d2', 2, 0, 'new', 4).id, documentId: 'd2', version: 2, contentHash: 'h' });
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: chunk('d2', 1, 0, 'old', 3).id, documentId: 'd2', version: 1, contentHash: 'h' });
      const progress = await store.repositories.documents.listIndexingProgress(scope, ['d3', 'missing', 'd2', 'd1', 'd2']);
      expect(progress.map((p) => [p.document.id, p.document.version, p.document.status, p.document.error])).toEqual([
        ['d3', 1, 'failed', 'broken'],
        ['d2', 2, 'pending', null],
        ['d1', 1, 'pending', null],
      ]);
      expect(progress.map((p) => p.chunkCounts)).toEqual([{}, { embedded: 1 }, { embedded: 1, graphed: 1 }]);
      // Only the current version's pause counts.
      expect(progress.map((p) => p.pausedChunks)).toEqual([0, 1, 0]);
      expect(await store.repositories.documents.listIndexingProgress({ tenantId: 'other', kbId: scope.kbId }, ['d1'])).toEqual([]);
      expect(await store.repositories.documents.listIndexingProgress(scope, [])).toEqual([]);
    });
  });
}
