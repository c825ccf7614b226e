import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { ExtractionResult } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS } from './store-contract';

function result(name: string): ExtractionResult {
  return { entities: [{ name, type: 'concept', description: `${name}, as extracted` }], relationships: [] };
}

/**
 * The extraction cache, for every TrellisStore adapter: entries are the tenant's (no lookup
 * sees, or counts a hit on, another tenant's), shared by the tenant's knowledge bases, and
 * deleted with the knowledge base that wrote them.
 */
export function describeExtractionCacheContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: extraction cache`, () => {
    let store: TrellisStore;
    let first: KbScope;
    let second: KbScope;
    let otherTenant: KbScope;

    async function knowledgeBase(tenantId: string, kbName: string): Promise<KbScope> {
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId }, { name: kbName, description: '', settings: TEST_KB_SETTINGS });
      return { tenantId, kbId: kb.id };
    }

    beforeEach(async () => {
      store = await makeStore();
      first = await knowledgeBase('t1', 'first');
      second = await knowledgeBase('t1', 'second');
      otherTenant = await knowledgeBase('t2', 'first');
    });

    afterEach(async () => {
      await store.close();
    });

    it('keeps the last write of a key, idempotently', async () => {
      expect(await store.repositories.extractionCache.getCachedExtraction(first, 'k')).toBeNull();
      await store.repositories.extractionCache.putCachedExtraction(first, 'k', result('Ada'));
      await store.repositories.extractionCache.putCachedExtraction(first, 'k', result('Ada'));
      expect(await store.repositories.extractionCache.getCachedExtraction(first, 'k')).toEqual({ kbId: first.kbId, result: result('Ada') });
      await store.repositories.extractionCache.putCachedExtraction(first, 'k', result('Grace'));
      expect(await store.repositories.extractionCache.getCachedExtraction(first, 'k')).toEqual({ kbId: first.kbId, result: result('Grace') });
    });

    it("never answers with another tenant's entry", async () => {
      await store.repositories.extractionCache.putCachedExtraction(first, 'k', result('Ada'));
      expect(await store.repositories.extractionCache.getCachedExtraction(otherTenant, 'k')).toBeNull();
      // Same kb id under another tenant: still not the entry.
      expect(await store.repositories.extractionCache.getCachedExtraction({ tenantId: 't2', kbId: first.kbId }, 'k')).toBeNull();
      await store.repositories.extractionCache.putCachedExtraction(otherTenant, 'k', result('Grace'));
      expect(await store.repositories.extractionCache.getCachedExtraction(otherTenant, 'k')).toEqual({ kbId: otherTenant.kbId, result: result('Grace') });
      expect(await store.repositories.extractionCache.getCachedExtraction(first, 'k')).toEqual({ kbId: first.kbId, result: result('Ada') });
    });

    it("answers a knowledge base with another one's entry of the same tenant, its own first", async () => {
      await store.repositories.extractionCache.putCachedExtraction(first, 'k', result('Ada'));
      expect(await store.repositories.extractionCache.getCachedExtraction(second, 'k')).toEqual({ kbId: first.kbId, result: result('Ada') });
      await store.repositories.extractionCache.putCachedExtraction(second, 'k', result('Grace'));
      expect(await store.repositories.extractionCache.getCachedExtraction(second, 'k')).toEqual({ kbId: second.kbId, result: result('Grace') });
      expect(await store.repositories.extractionCache.getCachedExtraction(first, 'k')).toEqual({ kbId: first.kbId, result: result('Ada') });
    });

    it('deletes the entries of a knowledge base with it, and only those', async () => {
      await store.repositories.extractionCache.putCachedExtraction(first, 'only-first', result('Ada'));
      await store.repositories.extractionCache.putCachedExtraction(first, 'both', result('Ada'));
      await store.repositories.extractionCache.putCachedExtraction(second, 'both', result('Ada'));
      await store.repositories.extractionCache.putCachedExtraction(otherTenant, 'only-first', result('Ada'));
      expect(await store.repositories.knowledgeBases.deleteKnowledgeBase(first)).toBe(true);
      const third = await knowledgeBase('t1', 'third');
      expect(await store.repositories.extractionCache.getCachedExtraction(third, 'only-first')).toBeNull();
      expect(await store.repositories.extractionCache.getCachedExtraction(third, 'both')).toEqual({ kbId: second.kbId, result: result('Ada') });
      expect(await store.repositories.extractionCache.getCachedExtraction(otherTenant, 'only-first')).toEqual({ kbId: otherTenant.kbId, result: result('Ada') });
    });
  });
}
