import { describe, expect, it } from 'vitest';
import type { ExtractionSettings, KbScope } from '@trellis/contracts';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, eachStoreWithKnowledgeBase } from './store-contract';

const SETTINGS = TEST_KB_SETTINGS;

const EXTRACTION: ExtractionSettings = {
  entityTypes: ['drug', 'disease'],
  instructions: 'Only clinical facts.',
  examples: '',
  gleaningPasses: 1,
  outputMode: 'json_object',
};

const usage = (calls: number, cacheHits = 0) => ({ calls, inputTokens: calls * 100, outputTokens: calls * 10, estimatedCostUsd: calls * 0.5, cacheHits });

/**
 * Knowledge-base updates, LLM usage accounting and the shared LLM call budget: the part of
 * the TrellisStore contract the extraction cost controls rely on. `makeStore` returns a store
 * over an empty database; `makeSecondStore`, when given, another store over the same one.
 */
export function describeLlmBudgetContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: knowledge-base settings, LLM usage and call budget`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    }, 'before');

    it('updates description and settings, extraction settings included, within the tenant only', async () => {
      const updated = await store.repositories.knowledgeBases.updateKnowledgeBase(scope, { description: 'after', settings: { ...SETTINGS, llmModel: 'm2', extraction: EXTRACTION } });
      expect(updated).toMatchObject({ id: scope.kbId, name: 'kb', description: 'after', settings: { llmModel: 'm2', extraction: EXTRACTION } });
      expect((await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 't1' }, 'kb'))?.settings.extraction).toEqual(EXTRACTION);
      expect(await store.repositories.knowledgeBases.updateKnowledgeBase({ tenantId: 't2', kbId: scope.kbId }, { description: 'x', settings: SETTINGS })).toBeNull();
      expect((await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 't1' }, 'kb'))?.description).toBe('after');
    });

    it('adds LLM usage per document version and sums it per knowledge base', async () => {
      expect(await store.repositories.llmUsage.getDocumentLlmUsage(scope, 'd1', 1)).toEqual({ calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, cacheHits: 0 });
      await store.repositories.llmUsage.addLlmUsage(scope, 'd1', 1, usage(2), 'extraction');
      await store.repositories.llmUsage.addLlmUsage(scope, 'd1', 1, usage(1, 3), 'extraction');
      await store.repositories.llmUsage.addLlmUsage(scope, 'd1', 2, usage(4), 'extraction');
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 1, usage(1), 'extraction');
      await store.repositories.llmUsage.addLlmUsage({ tenantId: 't2', kbId: scope.kbId }, 'd1', 1, usage(50), 'extraction');
      expect(await store.repositories.llmUsage.getDocumentLlmUsage(scope, 'd1', 1)).toEqual({ calls: 3, inputTokens: 300, outputTokens: 30, estimatedCostUsd: 1.5, cacheHits: 3 });
      expect(await store.repositories.llmUsage.getKnowledgeBaseLlmUsage(scope)).toEqual({ calls: 8, inputTokens: 800, outputTokens: 80, estimatedCostUsd: 4, cacheHits: 3 });
      await store.repositories.knowledgeBases.deleteKnowledgeBase(scope);
      expect((await store.repositories.llmUsage.getKnowledgeBaseLlmUsage(scope)).calls).toBe(0);
      expect((await store.repositories.llmUsage.getKnowledgeBaseLlmUsage({ tenantId: 't2', kbId: scope.kbId })).calls).toBe(50);
    });

    it('adds LLM spend per UTC day and purpose, sums it from a day on, and drops it with the knowledge base', async () => {
      const day = (iso: string) => new Date(`${iso}T12:00:00.000Z`);
      const other = { tenantId: 't2', kbId: scope.kbId };
      await store.repositories.llmUsage.addLlmUsage(scope, 'd1', 1, usage(2), 'extraction', day('2026-10-31'));
      await store.repositories.llmUsage.addLlmUsage(scope, 'd1', 1, { ...usage(3), countedInputTokens: 270 }, 'extraction', day('2026-11-01'));
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 1, usage(1), 'extraction', day('2026-11-02'));
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 1, usage(1), 'summary', day('2026-11-02'));
      // Cache hits cost no call: they count for the document but are no spend.
      await store.repositories.llmUsage.addLlmUsage(scope, 'd2', 1, usage(0, 4), 'extraction', day('2026-11-02'));
      await store.repositories.llmUsage.addLlmUsage(other, 'd1', 1, usage(50), 'extraction', day('2026-11-02'));
      const november = await store.repositories.llmUsage.getLlmSpend(scope, '2026-11-01');
      expect(november).toEqual({
        extraction: { calls: 4, inputTokens: 400, outputTokens: 40, estimatedCostUsd: 2, countedInputTokens: 270 },
        summary: { calls: 1, inputTokens: 100, outputTokens: 10, estimatedCostUsd: 0.5, countedInputTokens: 0 },
        community: { calls: 0, inputTokens: 0, outputTokens: 0, estimatedCostUsd: 0, countedInputTokens: 0 },
      });
      expect((await store.repositories.llmUsage.getLlmSpend(scope, '2026-11-02')).extraction.calls).toBe(1);
      expect((await store.repositories.llmUsage.getLlmSpend(scope, '0000-00-00')).extraction.calls).toBe(6);
      expect((await store.repositories.llmUsage.getDocumentLlmUsage(scope, 'd2', 1)).cacheHits).toBe(4);
      await store.repositories.knowledgeBases.deleteKnowledgeBase(scope);
      expect((await store.repositories.llmUsage.getLlmSpend(scope, '0000-00-00')).extraction.calls).toBe(0);
      expect((await store.repositories.llmUsage.getLlmSpend(other, '0000-00-00')).extraction.calls).toBe(50);
    });

    it('keeps chunks paused by a budget once each, oldest first, per knowledge base, until unpaused or their version goes', async () => {
      const other = { tenantId: 't2', kbId: scope.kbId };
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: 'c2', documentId: 'd1', version: 1, contentHash: 'h2' }, new Date('2026-11-01T00:00:02.000Z'));
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: 'c1', documentId: 'd1', version: 1, contentHash: 'h1' }, new Date('2026-11-01T00:00:01.000Z'));
      await store.repositories.budgetPauses.pauseChunk(scope, { chunkId: 'c1', documentId: 'd1', version: 1, contentHash: 'h1' }, new Date('2026-11-01T00:00:01.000Z'));
      await store.repositories.budgetPauses.pauseChunk(other, { chunkId: 'c9', documentId: 'd9', version: 1, contentHash: 'h9' });
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(2);
      expect((await store.repositories.budgetPauses.listPausedChunks(scope, 10)).map((c) => [c.chunkId, c.pausedAt])).toEqual([
        ['c1', '2026-11-01T00:00:01.000Z'],
        ['c2', '2026-11-01T00:00:02.000Z'],
      ]);
      expect((await store.repositories.budgetPauses.listPausedChunks(scope, 1)).map((c) => c.chunkId)).toEqual(['c1']);
      expect(await store.repositories.budgetPauses.listScopesWithPausedChunks()).toEqual(expect.arrayContaining([scope, other]));
      expect(await store.repositories.budgetPauses.unpauseChunks(scope, ['c1', 'missing'])).toBe(1);
      expect((await store.repositories.budgetPauses.listPausedChunks(scope, 10)).map((c) => c.chunkId)).toEqual(['c2']);
      expect(await store.repositories.budgetPauses.countPausedChunks(other)).toBe(1);
      await store.repositories.knowledgeBases.deleteKnowledgeBase(scope);
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(0);
      expect(await store.repositories.budgetPauses.countPausedChunks(other)).toBe(1);
    });

    it('takes from a token bucket until it is empty, then says how long to wait, and refills with time', async () => {
      const t0 = 1_000_000;
      expect(await store.repositories.llmBudget.takeFromBucket('m:rpm', 1, 60, t0)).toBe(0);
      for (let i = 0; i < 59; i++) expect(await store.repositories.llmBudget.takeFromBucket('m:rpm', 1, 60, t0)).toBe(0);
      // Empty: one token comes back per second at 60 per minute.
      expect(await store.repositories.llmBudget.takeFromBucket('m:rpm', 1, 60, t0)).toBe(1000);
      expect(await store.repositories.llmBudget.takeFromBucket('m:rpm', 1, 60, t0 + 500)).toBe(500);
      expect(await store.repositories.llmBudget.takeFromBucket('m:rpm', 1, 60, t0 + 1000)).toBe(0);
      // Other keys have their own bucket.
      expect(await store.repositories.llmBudget.takeFromBucket('other:rpm', 1, 60, t0 + 1000)).toBe(0);
      // A forced charge leaves a debt that later takers wait out.
      expect(await store.repositories.llmBudget.takeFromBucket('m:tpm', 900, 1000, t0)).toBe(0);
      expect(await store.repositories.llmBudget.takeFromBucket('m:tpm', 500, 1000, t0, true)).toBe(0);
      expect(await store.repositories.llmBudget.takeFromBucket('m:tpm', 100, 1000, t0)).toBe(30_000);
      // An amount above the budget is capped at the budget, so it can ever be granted.
      expect(await store.repositories.llmBudget.takeFromBucket('big:tpm', 5000, 1000, t0)).toBe(0);
    });

    it('grants at most `slots` unexpired leases, frees released and expired ones', async () => {
      const t0 = 5_000_000;
      expect(await store.repositories.llmBudget.acquireLease('m', 'a', 2, t0 + 10_000, t0)).toBe(true);
      expect(await store.repositories.llmBudget.acquireLease('m', 'b', 2, t0 + 10_000, t0)).toBe(true);
      expect(await store.repositories.llmBudget.acquireLease('m', 'c', 2, t0 + 10_000, t0)).toBe(false);
      expect(await store.repositories.llmBudget.acquireLease('other', 'c', 2, t0 + 10_000, t0)).toBe(true);
      await store.repositories.llmBudget.releaseLease('m', 'a');
      expect(await store.repositories.llmBudget.acquireLease('m', 'c', 2, t0 + 10_000, t0)).toBe(true);
      expect(await store.repositories.llmBudget.acquireLease('m', 'd', 2, t0 + 20_000, t0 + 1)).toBe(false);
      // Holders that died without releasing: their leases expire and the slots are free again.
      expect(await store.repositories.llmBudget.acquireLease('m', 'd', 2, t0 + 20_000, t0 + 10_000)).toBe(true);
      expect(await store.repositories.llmBudget.acquireLease('m', 'e', 2, t0 + 20_000, t0 + 10_000)).toBe(true);
      expect(await store.repositories.llmBudget.acquireLease('m', 'f', 2, t0 + 20_000, t0 + 10_001)).toBe(false);
    });
  });
}

/** Two stores over one database (two processes of a deployment) share one budget. */
export function describeSharedLlmBudget(name: string, makeStores: () => Promise<[TrellisStore, TrellisStore]>): void {
  describe(`${name}: call budget shared by two store instances`, () => {
    it('lets concurrent takers from two instances take no more than the budget', async () => {
      const [a, b] = await makeStores();
      try {
        const t0 = 9_000_000;
        const takes = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).repositories.llmBudget.takeFromBucket('shared:rpm', 1, 12, t0)));
        expect(takes.filter((w) => w === 0)).toHaveLength(12);
        const leases = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).repositories.llmBudget.acquireLease('shared', `h${i}`, 3, t0 + 60_000, t0)));
        expect(leases.filter(Boolean)).toHaveLength(3);
        await b.repositories.llmBudget.releaseLease('shared', `h${leases.findIndex(Boolean)}`);
        expect(await a.repositories.llmBudget.acquireLease('shared', 'late', 3, t0 + 60_000, t0)).toBe(true);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
