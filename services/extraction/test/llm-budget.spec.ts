import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentHash, stableId } from '@trellis/contracts';
import type { events, KbScope, KbSettings, LlmBudgetSettings } from '@trellis/contracts';
import { createModels } from '@trellis/models';
import { loadConfig } from '@trellis/config';
import { parseLlmPrices } from '@trellis/observability';
import type { TrellisStore } from '@trellis/storage';
import { FakeOpenAiServer, testOutbox } from '@trellis/testing';
import { describeWithInfra } from '@trellis/testing/suites';
import { ExtractionService } from '../src/extraction.service';
import { ExtractorRegistry } from '../src/extractor-registry';
import { BudgetGate } from '../src/budget/budget-gate';
import { BudgetResumer } from '../src/budget/budget-resumer';
import { RecordingBus, mysqlTestStore, sqliteTestStore } from './test-stores';
import type { TestStore } from './test-stores';

/**
 * Knowledge-base LLM budgets with real stores (SQLite, and MariaDB through TRELLIS_TEST_MYSQL_URL),
 * the real OpenAI client against the fake provider over HTTP: a spent budget pauses LLM
 * extraction (no call is made), the paused chunk waits on the list, and raising the budget or a
 * new UTC day resumes it through `chunk.ready`, after which it is extracted.
 */

const BASE: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const budget = (dailyTokens: number): LlmBudgetSettings => ({ dailyTokens, monthlyTokens: 0, dailyUsd: 0, monthlyUsd: 0 });
const REPLY = JSON.stringify({ entities: [{ name: 'Marie Curie', type: 'person', description: 'Physicist.', attributes: [] }], relationships: [] });

function describeBudget(name: string, openStore: () => Promise<TestStore>) {
  describe(`LLM budget on ${name}`, () => {
    const fake = new FakeOpenAiServer(16);
    const bus = new RecordingBus();
    let store: TrellisStore;
    let drop: () => Promise<void>;
    let service: ExtractionService;
    let local: ExtractionService;
    let gate: BudgetGate;
    let scope: KbScope;

    beforeAll(async () => {
      fake.respondWith(() => ({ kind: 'content', content: REPLY }));
      const config = loadConfig({ OPENAI_BASE_URL: await fake.start(), TRELLIS_LLM_MODEL: 'gpt-4o-mini', TRELLIS_EMBEDDINGS: 'openai', TRELLIS_EMBEDDING_DIMENSIONS: '16' }, 'test');
      ({ store, drop } = await openStore());
      const repos = store.repositories;
      // Read afresh on every check: the test changes budgets and spend between calls.
      gate = new BudgetGate(repos, undefined, 0);
      service = new ExtractionService(repos, testOutbox(bus, store.repositories), new ExtractorRegistry(await createModels(config)), parseLlmPrices(undefined), undefined, gate);
      const localModels = await createModels(loadConfig({ TRELLIS_EMBEDDINGS: 'hash' }, 'test'));
      local = new ExtractionService(repos, testOutbox(bus, store.repositories), new ExtractorRegistry(localModels), parseLlmPrices(undefined), undefined, gate);
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: { ...BASE, llmBudget: budget(1) } });
      scope = { tenantId: 't', kbId: kb.id };
    });

    afterAll(async () => {
      await store?.close();
      await drop?.();
      await fake.stop();
    });

    async function chunkReady(documentId: string, text: string, extraction = service): Promise<events.ChunkReady> {
      await store.repositories.documents.saveDocumentVersion(scope, { id: documentId, sourceUri: documentId, filename: documentId, mimeType: 'text/plain', contentHash: documentId, version: 1, sizeBytes: text.length, metadata: {}, text });
      const chunk = { id: stableId('chk', documentId, 1, 0), documentId, version: 1, ordinal: 0, text, heading: '', tokenCount: 5, contentHash: contentHash(text), embedding: new Float32Array(16).fill(0.25) };
      await store.repositories.chunks.upsertChunks(scope, [chunk]);
      await store.repositories.documents.setDocumentStatus(scope, documentId, 1, 'embedded');
      const event = { context: { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId, documentVersion: 1, traceparent: '', knowledgeBase: undefined }, chunkId: chunk.id, contentHash: chunk.contentHash };
      await extraction.onChunkReady(event);
      return event;
    }

    const setBudget = async (b: LlmBudgetSettings) => {
      const kb = (await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 't' }, scope.kbId))!;
      await store.repositories.knowledgeBases.updateKnowledgeBase(scope, { description: '', settings: { ...kb.settings, llmBudget: b } });
    };
    const chunkStatus = async (documentId: string) => (await store.repositories.chunks.getChunk(scope, stableId('chk', documentId, 1, 0)))?.status;

    it('extracts while the budget has room, then pauses the next chunk without calling the model', async () => {
      await chunkReady('d1', 'Marie Curie discovered polonium.');
      expect(fake.chatRequests()).toHaveLength(1);
      expect(await chunkStatus('d1')).toBe('extracted');
      const spent = await store.repositories.llmUsage.getLlmSpend(scope, new Date().toISOString().slice(0, 10));
      expect(spent.extraction.calls).toBe(1);
      expect(spent.extraction.inputTokens + spent.extraction.outputTokens).toBeGreaterThan(1);

      bus.take('chunk.extracted');
      await chunkReady('d2', 'Pierre Curie studied magnetism.');
      expect(fake.chatRequests()).toHaveLength(1);
      expect(await chunkStatus('d2')).toBe('embedded');
      expect(bus.take('chunk.extracted')).toEqual([]);
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(1);
      expect((await store.repositories.documents.listProgress(scope, [{ documentId: 'd2', version: 1 }])).get('d2')!.pausedChunks).toBe(1);
      // Paused work is waiting, not stuck: the sweeper leaves it alone.
      expect((await store.repositories.chunks.listStuckChunks(new Date(Date.now() + 60_000).toISOString(), 10)).map((c) => c.documentId)).not.toContain('d2');
    });

    it('still answers from the cache and extracts locally while the budget is spent: neither calls a model', async () => {
      await chunkReady('d3', 'Marie Curie discovered polonium.');
      expect(await chunkStatus('d3')).toBe('extracted');
      await chunkReady('d4', 'Irene Joliot-Curie won a prize.', local);
      expect(await chunkStatus('d4')).toBe('extracted');
      expect(fake.chatRequests()).toHaveLength(1);
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(1);
    });

    it('keeps the chunk paused while the budget stays spent, and resumes it once the budget is raised', async () => {
      const resumer = new BudgetResumer(store.repositories, testOutbox(bus, store.repositories), gate);
      bus.take('chunk.ready');
      bus.take('chunk.extracted');
      expect(await resumer.resumeOnce()).toBe(0);
      expect(bus.take('chunk.ready')).toEqual([]);

      await setBudget(budget(1_000_000));
      expect(await resumer.resumeOnce()).toBe(1);
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(0);
      const [again] = bus.take('chunk.ready') as events.ChunkReady[];
      expect(again).toMatchObject({ chunkId: stableId('chk', 'd2', 1, 0), contentHash: contentHash('Pierre Curie studied magnetism.') });
      expect(again!.context?.knowledgeBase?.name).toBe('kb');
      await service.onChunkReady(again!);
      expect(fake.chatRequests()).toHaveLength(2);
      expect(await chunkStatus('d2')).toBe('extracted');
      expect((bus.take('chunk.extracted') as events.ChunkExtracted[]).map((e) => e.chunkId)).toEqual([stableId('chk', 'd2', 1, 0)]);
    });

    it('resumes at the next UTC day when a daily budget was spent, without anyone raising it', async () => {
      await setBudget(budget(1));
      await chunkReady('d5', 'Paul Langevin taught physics.');
      expect(await store.repositories.budgetPauses.countPausedChunks(scope)).toBe(1);
      const today = new BudgetResumer(store.repositories, testOutbox(bus, store.repositories), gate);
      expect(await today.resumeOnce()).toBe(0);
      const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1, 0, 0, 1));
      const nextDay = new BudgetResumer(store.repositories, testOutbox(bus, store.repositories), gate, undefined, () => tomorrow);
      expect(await nextDay.resumeOnce()).toBe(1);
      expect((bus.take('chunk.ready') as events.ChunkReady[]).map((e) => e.chunkId)).toEqual([stableId('chk', 'd5', 1, 0)]);
    });
  });
}

describeBudget('SqliteStore', sqliteTestStore);

// CI sets TRELLIS_TEST_MYSQL_URL (npm test starts MariaDB): without it this half fails, it does not pass unseen.
describeWithInfra('LLM budget on MysqlStore', { mysql: true }, () => describeBudget('MysqlStore', () => mysqlTestStore(process.env.TRELLIS_TEST_MYSQL_URL!)));
