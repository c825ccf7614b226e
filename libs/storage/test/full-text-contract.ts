import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, chunk, eachStoreWithKnowledgeBase, saveTestDocument } from './store-contract';

/**
 * Full-text search as both engines must answer it, on corpora where the bounded search could
 * go wrong: a common term matching most chunks, other knowledge bases with better matches,
 * chunks of a replaced document version ranked first. Both stores run the same expectations,
 * so they agree on these rankings.
 */
export function describeFullTextContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: full-text search`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const texts = async (query: string, k: number, at = scope) => (await store.repositories.chunks.searchChunksFullText(at, query, k)).map((h) => h.chunk.text);

    async function fill(at: KbScope, documentId: string, lines: readonly string[]): Promise<void> {
      await saveTestDocument(store, at, documentId);
      await store.repositories.chunks.upsertChunks(at, lines.map((line, i) => chunk(documentId, 1, i, line, i + 1)));
    }

    it('finds the one chunk of a rare term among many chunks of a common one, first', async () => {
      const common = Array.from({ length: 120 }, (_, i) => `river boats carry cargo number ${i}`);
      await fill(scope, 'd1', [...common.slice(0, 60), 'river otter colony', ...common.slice(60)]);
      expect(await texts('otter', 5)).toEqual(['river otter colony']);
      const hits = await texts('river otter', 5);
      expect(hits[0]).toBe('river otter colony');
      expect(hits).toHaveLength(5);
      // Every chunk has "river": a k past them all returns them all, the rare one first.
      const all = await texts('river otter', 500);
      expect(all).toHaveLength(121);
      expect(all[0]).toBe('river otter colony');
    });

    it('ranks chunks matching more of the rare terms first, on both engines alike', async () => {
      await fill(scope, 'd1', [
        'the harbour master logs tide tables daily',
        'tide tables and lunar cycles predict flooding',
        'lunar cycles shape tide tables and spring flooding in estuaries',
        'a harbour cat sleeps on warm stones',
        'daily logs of cargo in the harbour',
        'stones and stones',
      ]);
      expect((await texts('lunar flooding estuaries', 3)).slice(0, 2)).toEqual([
        'lunar cycles shape tide tables and spring flooding in estuaries',
        'tide tables and lunar cycles predict flooding',
      ]);
      expect(await texts('harbour cat', 1)).toEqual(['a harbour cat sleeps on warm stones']);
    });

    it('weighs a term in half of the chunks or more at almost nothing: a rare term outranks many common ones', async () => {
      // Like hybrid's second hop: a question plus names that most pages of the corpus hold.
      const common = Array.from({ length: 11 }, (_, i) => `nest module controller provider guard pipe ${i}`);
      const filler = Array.from({ length: 8 }, (_, i) => `unrelated text number ${i}`);
      await fill(scope, 'd1', [...common, 'an interceptor wraps the call', ...filler]);
      const hits = await texts('interceptor nest module controller provider guard pipe', 3);
      expect(hits[0]).toBe('an interceptor wraps the call');
    });

    it("searches its own knowledge base only: another's better matches neither show nor crowd out its own", async () => {
      const other = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: scope.tenantId }, { name: 'other', description: '', settings: TEST_KB_SETTINGS });
      const otherScope = { tenantId: scope.tenantId, kbId: other.id };
      await fill(otherScope, 'o1', Array.from({ length: 50 }, (_, i) => `glacier glacier glacier melt ${i}`));
      await fill(scope, 'd1', ['a glacier far away', 'nothing about ice']);
      expect(await texts('glacier melt', 3)).toEqual(['a glacier far away']);
      expect(await texts('glacier', 60, otherScope)).toHaveLength(50);
      // Another tenant naming the same knowledge base sees nothing.
      expect(await texts('glacier', 5, { tenantId: 'someone-else', kbId: scope.kbId })).toEqual([]);
    });

    it('returns current chunks only, however many chunks of a replaced version rank above them', async () => {
      await fill(scope, 'd1', Array.from({ length: 40 }, (_, i) => `comet comet comet tail ${i}`));
      await saveTestDocument(store, scope, 'd1', 2);
      // Version 2 is the current one; version 1's chunks are still indexed until they are removed.
      await store.repositories.chunks.upsertChunks(scope, [chunk('d1', 2, 0, 'a comet among many other words of the new version', 99)]);
      expect(await texts('comet', 1)).toEqual(['a comet among many other words of the new version']);
      expect(await texts('comet', 10)).toEqual(['a comet among many other words of the new version']);
    });
  });
}
