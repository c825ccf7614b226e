import { describe, expect, it } from 'vitest';
import type { events, KbSettings, TopicName, TopicPayload } from '@trellis/contracts';
import { ErrorCode, fromEventSettings, TrellisError } from '@trellis/contracts';
import type { EventBus } from '@trellis/messaging';
import { isPoison } from '@trellis/messaging';
import { LocalHashEmbedder } from '@trellis/models';
import { testOutbox } from '@trellis/testing';
import { SqliteStore } from '@trellis/storage';
import { ChunkingService } from './chunking.service';

const SETTINGS: KbSettings = {
  chunkSizeTokens: 32,
  chunkOverlapTokens: 0,
  splitter: 'sentence',
  embeddingModel: '',
  embeddingDimensions: 0,
  llmModel: 'gpt-4o-mini',
  extractionPromptVersion: '',
  resolution: { mode: 'name', similarityThreshold: 0, llmMergeDecisions: '', llmMergeFloor: 0, summaryMaxChars: 0 },
};

describe('ChunkingService', () => {
  it('reads the knowledge base once per document and sends its settings along with every chunk', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'carried', description: '', settings: SETTINGS });
      const scope = { tenantId: 't', kbId: kb.id };
      const text = Array.from({ length: 12 }, (_, i) => `Sentence number ${i} says something about topic ${i} at some length.`).join(' ');
      await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: text.length, metadata: {}, text });
      const published: events.ChunkReady[] = [];
      const bus: Pick<EventBus, 'publish'> = {
        publish: async <T extends TopicName>(_topic: T, _key: string, payload: TopicPayload<T>) => {
          published.push(payload as events.ChunkReady);
        },
      };
      let reads = 0;
      const repos = store.repositories;
      const knowledgeBases = { ...repos.knowledgeBases, findKnowledgeBase: (...args: Parameters<typeof repos.knowledgeBases.findKnowledgeBase>) => ((reads += 1), repos.knowledgeBases.findKnowledgeBase(...args)) };
      const service = new ChunkingService({ ...repos, knowledgeBases }, testOutbox(bus, store.repositories), new LocalHashEmbedder(32));
      await service.onDocumentIngested({ context: { tenantId: 't', knowledgeBaseId: kb.id, documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: undefined }, contentHash: 'h' });

      expect(published.length).toBeGreaterThan(3);
      expect(reads).toBe(1);
      // Written with the status, deleted once published.
      expect(await store.repositories.outbox.countOutboxEvents()).toBe(0);
      for (const event of published) expect(fromEventSettings(event.context!.knowledgeBase!)).toEqual({ name: 'carried', settings: SETTINGS });
    } finally {
      await store.close();
    }
  });

  it('fails a document whose split passes the time budget, for good: dead-lettered at once, marked failed, not re-driven', async () => {
    const store = new SqliteStore(':memory:');
    try {
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'slow', description: '', settings: { ...SETTINGS, chunkSizeTokens: 512 } });
      const scope = { tenantId: 't', kbId: kb.id };
      const text = Array.from({ length: 2_000_000 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
      await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd.txt', filename: 'd.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: text.length, metadata: {}, text });
      const bus: Pick<EventBus, 'publish'> = { publish: async () => undefined };
      const service = new ChunkingService(store.repositories, testOutbox(bus, store.repositories), new LocalHashEmbedder(32), 30);
      const event = { context: { tenantId: 't', knowledgeBaseId: kb.id, documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: undefined }, contentHash: 'h' };
      const error = await service.onDocumentIngested(event).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TrellisError);
      expect((error as TrellisError).code).toBe(ErrorCode.ResourceExhausted);
      expect(isPoison(error)).toBe(true);
      expect((await store.repositories.documents.listUnfinishedDocuments()).map((d) => d.documentId)).toEqual(['d']);
      await service.onFailure(event, error as Error);
      expect(await store.repositories.documents.getDocument(scope, 'd')).toMatchObject({ status: 'failed', error: expect.stringMatching(/chunking failed: splitting the document into chunks took longer than 30 ms/) });
      expect(await store.repositories.documents.listUnfinishedDocuments()).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
