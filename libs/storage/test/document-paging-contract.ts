import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { TrellisStore } from '../src/trellis-store';
import { eachStoreWithKnowledgeBase, saveTestDocument } from './store-contract';

/** ListDocuments' paging, as every adapter must page: keyset on the id, after a cursor, by status. */
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
      await store.setDocumentStatus(scope, 'd2', 1, 'failed', 'broken');
      await store.setDocumentStatus(scope, 'd4', 1, 'failed', 'broken');
      const ids = async (page: Parameters<typeof store.listDocuments>[1]) => (await store.listDocuments(scope, page)).map((d) => d.id);
      expect(await ids({ limit: 2 })).toEqual(['d1', 'd2']);
      expect(await ids({ limit: 2, afterId: 'd2' })).toEqual(['d3', 'd4']);
      expect(await ids({ limit: 2, afterId: 'd4' })).toEqual(['d5']);
      expect(await ids({ limit: 2, afterId: 'd5' })).toEqual([]);
      expect(await ids({ limit: 10, status: 'failed' })).toEqual(['d2', 'd4']);
      expect(await ids({ limit: 1, afterId: 'd2', status: 'failed' })).toEqual(['d4']);
      expect(await store.listDocuments({ tenantId: 'other', kbId: scope.kbId }, { limit: 10 })).toEqual([]);
      // Without a page: every document, in source order.
      expect((await store.listDocuments(scope)).map((d) => d.sourceUri)).toEqual(['d1.txt', 'd2.txt', 'd3.txt', 'd4.txt', 'd5.txt']);
    });
  });
}
