import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { contentHash } from '@trellis/contracts';
import type { KbScope, OutboxEvent, TopicName } from '@trellis/contracts';
import type { NewDocumentVersion } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, vectorFor } from './store-contract';

const tick = () => new Promise((resolve) => setTimeout(resolve, 25));
const later = () => new Date(Date.now() + 60_000).toISOString();

function event(id: string, topic: TopicName = 'chunk.ready', bytes: number[] = [8, 1, 0, 255]): OutboxEvent {
  return { id, topic, key: `doc-of-${id}`, payload: new Uint8Array(bytes), headers: { 'trellis-tenant': 't', 'trellis-kb': 'kb' } };
}

/**
 * The transactional outbox, for every TrellisStore adapter: events commit with the change they
 * announce or not at all, come back byte for byte in the order they were written, and go when
 * deleted.
 */
export function describeOutboxContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: transactional outbox`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    const version = (id: string, v: number): NewDocumentVersion => ({
      id,
      sourceUri: `${id}.txt`,
      filename: `${id}.txt`,
      mimeType: 'text/plain',
      contentHash: `h-${id}-${v}`,
      version: v,
      sizeBytes: 1,
      metadata: {},
      text: `${id} ${v}`,
    });

    beforeEach(async () => {
      store = await makeStore();
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'outbox', description: '', settings: TEST_KB_SETTINGS });
      scope = { tenantId: 't', kbId: kb.id };
    });

    afterEach(async () => {
      await store.close();
    });

    it('keeps the events of each change, byte for byte, in the order they were written', async () => {
      await store.repositories.documents.saveDocumentVersion(scope, version('d1', 1), [event('e1', 'document.ingested', [])]);
      const text = 'chunk text';
      await store.repositories.chunks.upsertChunks(scope, [{ id: 'c1', documentId: 'd1', version: 1, ordinal: 0, text, heading: '', tokenCount: 2, contentHash: contentHash(text), embedding: vectorFor(1) }]);
      await store.repositories.documents.setDocumentStatus(scope, 'd1', 1, 'embedded', null, [event('e2'), event('e3', 'chunk.ready', [1, 2, 3])]);
      await store.repositories.chunks.setChunkStatus(scope, 'c1', 'extracted', null, [event('e4', 'chunk.extracted')]);
      await store.repositories.outbox.appendOutboxEvents([event('e5', 'document.ingested')]);

      const listed = await store.repositories.outbox.listOutboxEvents(later(), 10);
      expect(listed.map((e) => e.id)).toEqual(['e1', 'e2', 'e3', 'e4', 'e5']);
      expect(listed[2]).toMatchObject({ id: 'e3', topic: 'chunk.ready', key: 'doc-of-e3', headers: { 'trellis-tenant': 't', 'trellis-kb': 'kb' } });
      expect([...listed[2]!.payload]).toEqual([1, 2, 3]);
      expect([...listed[0]!.payload]).toEqual([]);
      expect([...listed[1]!.payload]).toEqual([8, 1, 0, 255]);
      expect(Number.isNaN(Date.parse(listed[0]!.createdAt))).toBe(false);
      expect((await store.repositories.documents.getDocument(scope, 'd1'))?.status).toBe('embedded');
      expect((await store.repositories.chunks.getChunk(scope, 'c1'))?.status).toBe('extracted');
      expect(await store.repositories.outbox.countOutboxEvents()).toBe(5);
    });

    it('lists only events committed before the cut-off, at most the limit, and deletes by id', async () => {
      await store.repositories.outbox.appendOutboxEvents([event('old-1'), event('old-2'), event('old-3')]);
      await tick();
      const cutOff = new Date().toISOString();
      await tick();
      await store.repositories.outbox.appendOutboxEvents([event('new-1')]);

      expect((await store.repositories.outbox.listOutboxEvents(cutOff, 10)).map((e) => e.id)).toEqual(['old-1', 'old-2', 'old-3']);
      expect(await store.repositories.outbox.countOutboxEvents(cutOff)).toBe(3);
      expect(await store.repositories.outbox.countOutboxEvents()).toBe(4);
      expect((await store.repositories.outbox.listOutboxEvents(cutOff, 2)).map((e) => e.id)).toEqual(['old-1', 'old-2']);
      expect(await store.repositories.outbox.deleteOutboxEvents(['old-2', 'never-written'])).toBe(1);
      expect(await store.repositories.outbox.deleteOutboxEvents(['old-2'])).toBe(0);
      expect((await store.repositories.outbox.listOutboxEvents(later(), 10)).map((e) => e.id)).toEqual(['old-1', 'old-3', 'new-1']);
      expect(await store.repositories.outbox.countOutboxEvents()).toBe(3);
    });

    it('writes a change and its events together or not at all', async () => {
      await store.repositories.documents.saveDocumentVersion(scope, version('d2', 1), [event('taken')]);
      // The second event reuses a stored id: the unique key refuses it, so the transaction
      // rolls back, status included.
      await expect(store.repositories.documents.setDocumentStatus(scope, 'd2', 1, 'embedded', null, [event('fresh'), event('taken')])).rejects.toThrow();
      expect((await store.repositories.documents.getDocument(scope, 'd2'))?.status).toBe('pending');

      await expect(store.repositories.documents.saveDocumentVersion(scope, version('d2', 2), [event('taken')])).rejects.toThrow();
      expect((await store.repositories.documents.getDocument(scope, 'd2'))?.version).toBe(1);

      const text = 'another chunk';
      await store.repositories.chunks.upsertChunks(scope, [{ id: 'c2', documentId: 'd2', version: 1, ordinal: 0, text, heading: '', tokenCount: 2, contentHash: contentHash(text), embedding: vectorFor(2) }]);
      await expect(store.repositories.chunks.setChunkStatus(scope, 'c2', 'extracted', null, [event('taken')])).rejects.toThrow();
      expect((await store.repositories.chunks.getChunk(scope, 'c2'))?.status).toBe('embedded');

      expect((await store.repositories.outbox.listOutboxEvents(later(), 10)).map((e) => e.id)).toEqual(['taken']);
    });
  });
}
