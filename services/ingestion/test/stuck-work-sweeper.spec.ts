import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '@trellis/contracts';
import type { KbScope, KbSettings, TopicName, TopicPayload } from '@trellis/contracts';
import { SqliteStore } from '@trellis/storage';
import type { NewChunk } from '@trellis/storage';
import { testOutbox } from '@trellis/testing';
import { InProcessEventBus } from '@trellis/messaging';
import { StuckWorkSweeper } from '../src/sweeper/stuck-work-sweeper';
import { indexingBacklog } from '../src/indexing-backlog';
import type { SweeperTelemetry } from '../src/sweeper/stuck-work-sweeper';

const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const STUCK_AFTER_MS = 200;
const waitPastTimeout = () => new Promise((resolve) => setTimeout(resolve, STUCK_AFTER_MS + 50));

class RecordingBus {
  readonly published: Array<{ topic: TopicName; key: string; payload: unknown }> = [];
  async publish<T extends TopicName>(topic: T, key: string, payload: TopicPayload<T>): Promise<void> {
    this.published.push({ topic, key, payload });
  }
}

class RecordingTelemetry implements SweeperTelemetry {
  readonly counts: Record<string, number> = {};
  readonly logs: string[] = [];
  redriven(item: 'document' | 'chunk', count: number): void {
    this.counts[`${item}:redriven`] = (this.counts[`${item}:redriven`] ?? 0) + count;
  }
  gaveUp(item: 'document' | 'chunk', count: number): void {
    this.counts[`${item}:gave_up`] = (this.counts[`${item}:gave_up`] ?? 0) + count;
  }
  log(_fields: Record<string, unknown>, message: string): void {
    this.logs.push(message);
  }
}

function chunk(documentId: string, ordinal: number): NewChunk {
  const text = `${documentId} chunk ${ordinal}`;
  return { id: `${documentId}-${ordinal}`, documentId, version: 1, ordinal, text, heading: '', tokenCount: 3, contentHash: contentHash(text), embedding: new Float32Array([1, 0, 0]) };
}

/**
 * The sweeper over a real (SQLite) store: what it re-drives, with which events, how it counts
 * and when it gives up, with a short timeout and real time (the store stamps the wall clock).
 */
describe('StuckWorkSweeper', () => {
  let store: SqliteStore;
  let scope: KbScope;
  let bus: RecordingBus;
  let announced: Array<{ id: string; version: number; contentHash: string }>;
  let telemetry: RecordingTelemetry;

  const sweeper = (maxRedrives = 3, backlog?: () => Promise<boolean>) =>
    new StuckWorkSweeper(
      store.repositories,
      testOutbox(bus, store.repositories),
      { announce: async (_scope, document) => void announced.push({ id: document.id, version: document.version, contentHash: document.contentHash }) },
      { stuckAfterMs: STUCK_AFTER_MS, maxRedrives, batchSize: 100, leaseMs: 30_000, backlog },
      telemetry,
    );

  async function saveDocument(id: string): Promise<void> {
    await store.repositories.documents.saveDocumentVersion(scope, { id, sourceUri: `${id}.txt`, filename: `${id}.txt`, mimeType: 'text/plain', contentHash: `h-${id}`, version: 1, sizeBytes: 1, metadata: {}, text: id });
  }

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    bus = new RecordingBus();
    announced = [];
    telemetry = new RecordingTelemetry();
    // pending: never chunked; chunked: one chunk waiting for extraction, one for the graph, one done.
    await saveDocument('pending');
    await saveDocument('chunked');
    await store.repositories.chunks.upsertChunks(scope, [chunk('chunked', 0), chunk('chunked', 1), chunk('chunked', 2)]);
    await store.repositories.documents.setDocumentStatus(scope, 'chunked', 1, 'embedded');
    await store.repositories.chunks.setChunkStatus(scope, 'chunked-1', 'extracted');
    await store.repositories.chunks.markChunkGraphed(scope, 'chunked-2');
    // failed for good (dead-lettered): never re-driven, nor its chunk.
    await saveDocument('failed');
    await store.repositories.chunks.upsertChunks(scope, [chunk('failed', 0)]);
    await store.repositories.documents.setDocumentStatus(scope, 'failed', 1, 'failed', 'chunking failed: poison');
    await saveDocument('graphed');
    await store.repositories.documents.setDocumentStatus(scope, 'graphed', 1, 'graphed');
  });

  afterEach(async () => {
    await store.close();
  });

  it('leaves work alone that has not waited past the timeout', async () => {
    expect(await sweeper().sweepOnce()).toEqual({ documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0 });
    expect(bus.published).toEqual([]);
    expect(announced).toEqual([]);
  });

  it('re-publishes the event that moves each stuck item on, never for failed or finished work', async () => {
    await waitPastTimeout();
    expect(await sweeper().sweepOnce()).toEqual({ documentsRedriven: 1, chunksRedriven: 2, documentsFailed: 0 });
    expect(announced).toEqual([{ id: 'pending', version: 1, contentHash: 'h-pending' }]);
    // Keyed by chunk, so a document's chunks are extracted side by side.
    expect(bus.published.map((p) => [p.topic, p.key, (p.payload as { chunkId: string }).chunkId]).sort()).toEqual([
      ['chunk.ready', 'chunked-0', 'chunked-0'],
      ['chunk.ready', 'chunked-1', 'chunked-1'],
    ]);
    const payload = bus.published[0]!.payload as TopicPayload<'chunk.ready'>;
    expect(payload.context).toMatchObject({ tenantId: 't', knowledgeBaseId: scope.kbId, documentId: 'chunked', documentVersion: 1, knowledgeBase: { name: 'kb' } });
    expect(payload.contentHash).toBe(contentHash(`chunked chunk ${payload.chunkId.endsWith('0') ? 0 : 1}`));
    expect(telemetry.counts).toEqual({ 'document:redriven': 1, 'chunk:redriven': 2 });
    expect(telemetry.logs).toEqual(['sweeper re-drove stuck indexing work', 'sweeper re-drove stuck indexing work']);
    expect((await store.repositories.documents.getDocument(scope, 'failed'))?.status).toBe('failed');
    // Re-driven work waits afresh: the same moment finds nothing more to do.
    expect(await sweeper().sweepOnce()).toEqual({ documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0 });
  });

  it('re-drives nothing, and gives up on nothing, while indexing events are still queued; once they drain it re-drives', async () => {
    let queued = true;
    const backlogged = sweeper(1, async () => queued);
    await waitPastTimeout();
    for (let sweep = 0; sweep < 3; sweep++) {
      expect(await backlogged.sweepOnce()).toEqual({ documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0, deferred: true });
    }
    expect(bus.published).toEqual([]);
    expect(announced).toEqual([]);
    expect((await store.repositories.documents.getDocument(scope, 'pending'))?.status).toBe('pending');
    queued = false;
    expect(await backlogged.sweepOnce()).toEqual({ documentsRedriven: 1, chunksRedriven: 2, documentsFailed: 0 });
    expect(announced).toEqual([{ id: 'pending', version: 1, contentHash: 'h-pending' }]);
  });

  it('sees a backlog while the bus holds events not yet handled by a stage of the pipeline', async () => {
    const queue = new InProcessEventBus({ concurrency: 1 });
    await queue.subscribe('chunk.ready', { group: 'extraction' }, async () => undefined);
    await queue.subscribe('chunk.extracted', { group: 'graph-store' }, async () => undefined);
    // A group that is no stage of indexing (an audit consumer, say) holds nothing up.
    await queue.subscribe('document.ingested', { group: 'audit' }, async () => undefined);
    await queue.publish('document.ingested', 'd', { context: { tenantId: 't', knowledgeBaseId: 'kb', documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: undefined }, contentHash: 'h' });
    const backlog = indexingBacklog(queue, () => undefined);
    expect(await backlog()).toBe(false);
    await queue.publish('chunk.ready', 'c', { context: { tenantId: 't', knowledgeBaseId: 'kb', documentId: 'd', documentVersion: 1, traceparent: '', knowledgeBase: undefined }, chunkId: 'c', contentHash: 'h' });
    expect(await backlog()).toBe(true);
    await queue.start();
    await queue.idle();
    expect(await backlog()).toBe(false);
    await queue.stop();
  });

  it('counts a lag that cannot be read as none, and says why', async () => {
    const unreadable: string[] = [];
    const backlog = indexingBacklog({ consumerLag: () => Promise.reject(new Error('GROUP_AUTHORIZATION_FAILED')) }, (error) => unreadable.push(error.message));
    expect(await backlog()).toBe(false);
    expect(unreadable).toEqual(['GROUP_AUTHORIZATION_FAILED']);
  });

  it('gives up on a version still stuck after the cap: failed with the reason, not re-driven again', async () => {
    const maxRedrives = 2;
    for (let round = 1; round <= maxRedrives; round++) {
      await waitPastTimeout();
      expect(await sweeper(maxRedrives).sweepOnce()).toEqual({ documentsRedriven: 1, chunksRedriven: 2, documentsFailed: 0 });
    }
    await waitPastTimeout();
    bus.published.length = 0;
    announced.length = 0;
    expect(await sweeper(maxRedrives).sweepOnce()).toEqual({ documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 2 });
    expect(bus.published).toEqual([]);
    expect(announced).toEqual([]);
    const pending = await store.repositories.documents.getDocument(scope, 'pending');
    expect(pending).toMatchObject({ status: 'failed', error: expect.stringContaining('document stuck in pending after 2 re-drives') });
    expect(await store.repositories.documents.getDocument(scope, 'chunked')).toMatchObject({ status: 'failed', error: expect.stringContaining('2 chunk(s) stuck in embedded/extracted after 2 re-drives') });
    expect((await store.repositories.chunks.getChunk(scope, 'chunked-0'))?.status).toBe('failed');
    expect((await store.repositories.chunks.getChunk(scope, 'chunked-2'))?.status).toBe('graphed');
    expect(telemetry.counts).toMatchObject({ 'document:gave_up': 1, 'chunk:gave_up': 2 });
    // Failed for good: later sweeps leave them alone.
    await waitPastTimeout();
    expect(await sweeper(maxRedrives).sweepOnce()).toEqual({ documentsRedriven: 0, chunksRedriven: 0, documentsFailed: 0 });
  });

  it('sweeps in one process at a time: a held lease makes the other sweeper skip', async () => {
    await waitPastTimeout();
    const now = Date.now();
    expect(await store.repositories.llmBudget.acquireLease('trellis.sweeper', 'another-process', 1, now + 30_000, now)).toBe(true);
    expect(await sweeper().sweepOnce()).toBeNull();
    expect(announced).toEqual([]);
    await store.repositories.llmBudget.releaseLease('trellis.sweeper', 'another-process');
    expect(await sweeper().sweepOnce()).not.toBeNull();
    // The sweep released its lease when it finished.
    expect(await store.repositories.llmBudget.acquireLease('trellis.sweeper', 'another-process', 1, now + 30_000, now)).toBe(true);
  });
});
