import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, stableId } from '@trellis/contracts';
import type { KbScope, KbSettings } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { NewChunk } from '../src/records';
import type { TrellisStore } from '../src/trellis-store';

/** Settings of the knowledge bases the contract suites create. */
export const TEST_KB_SETTINGS: KbSettings = {
  chunkSizeTokens: 512,
  chunkOverlapTokens: 64,
  splitter: '',
  embeddingModel: '',
  embeddingDimensions: 0,
  llmModel: '',
  extractionPromptVersion: '',
};
const SETTINGS = TEST_KB_SETTINGS;

/**
 * Before each test, a store over an empty database with one knowledge base of tenant t1 (handed
 * to `use`); after it, the store closed.
 */
export function eachStoreWithKnowledgeBase(makeStore: () => Promise<TrellisStore>, use: (store: TrellisStore, scope: KbScope) => void, description = ''): void {
  let store: TrellisStore | undefined;
  beforeEach(async () => {
    store = await makeStore();
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description, settings: TEST_KB_SETTINGS });
    use(store, { tenantId: 't1', kbId: kb.id });
  });
  afterEach(async () => {
    await store?.close();
  });
}

/** Cosine similarity of two unit vectors (such as vectorFor's): their dot product. */
function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, x, i) => sum + x * b[i]!, 0);
}

/** Deterministic pseudo-random unit vector. */
export function vectorFor(seed: number, dimensions = 16): Float32Array {
  const v = new Float32Array(dimensions);
  let x = seed * 9301 + 49297;
  for (let i = 0; i < dimensions; i++) {
    x = (x * 9301 + 49297) % 233280;
    v[i] = x / 233280 - 0.5;
  }
  const norm = Math.hypot(...v);
  return v.map((n) => n / norm);
}

export function chunk(documentId: string, version: number, ordinal: number, text: string, seed: number): NewChunk {
  return {
    id: stableId('chk', documentId, version, ordinal),
    documentId,
    version,
    ordinal,
    text,
    heading: '',
    tokenCount: text.split(' ').length,
    contentHash: stableId('h', text),
    embedding: vectorFor(seed),
  };
}

export function entity(scope: KbScope, name: string, description: string): EntityMentionWrite {
  const normalizedName = name.toLowerCase();
  return { entityId: stableId('ent', scope.kbId, normalizedName), name, normalizedName, type: 'concept', description, embedding: vectorFor(name.length) };
}

function relationship(source: EntityMentionWrite, target: EntityMentionWrite, label: string, description: string): RelationshipMentionWrite {
  return {
    relationshipId: stableId('rel', source.entityId, label, target.entityId),
    sourceId: source.entityId,
    targetId: target.entityId,
    label,
    description,
    strength: 5,
    embedding: vectorFor(label.length + 100),
  };
}

/** Stores version `version` of a small text document `id` (source `<id>.txt`, metadata team=a). */
export function saveTestDocument(store: TrellisStore, scope: KbScope, id: string, version = 1) {
  return store.repositories.documents.saveDocumentVersion(scope, {
    id,
    sourceUri: `${id}.txt`,
    filename: `${id}.txt`,
    mimeType: 'text/plain',
    contentHash: `${id}-${version}`,
    version,
    sizeBytes: 10,
    metadata: { team: 'a' },
    title: `Title of ${id} v${version}`,
    text: `text of ${id} v${version}`,
  });
}

/**
 * The behaviour every TrellisStore adapter must have. Each adapter's spec calls this with a
 * factory that returns a store over an empty database.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: TrellisStore contract`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const addDocument = (id: string, version = 1) => saveTestDocument(store, scope, id, version);

    it('keeps knowledge bases apart per tenant and rejects duplicate names', async () => {
      await expect(store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: SETTINGS })).rejects.toMatchObject({
        code: ErrorCode.AlreadyExists,
      });
      const other = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't2' }, { name: 'kb', description: 'other tenant', settings: SETTINGS });
      expect(other.id).not.toBe(scope.kbId);
      expect((await store.repositories.knowledgeBases.listKnowledgeBases({ tenantId: 't1' })).map((k) => k.id)).toEqual([scope.kbId]);
      expect(await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 't2' }, scope.kbId)).toBeNull();
      expect((await store.repositories.knowledgeBases.findKnowledgeBase({ tenantId: 't1' }, 'kb'))?.settings).toEqual(SETTINGS);
    });

    it('stores document versions and ignores status updates for a replaced version', async () => {
      await addDocument('d1');
      await addDocument('d1', 2);
      const doc = await store.repositories.documents.getDocument(scope, 'd1');
      expect(doc).toMatchObject({ version: 2, status: 'pending', metadata: { team: 'a' } });
      await store.repositories.documents.setDocumentStatus(scope, 'd1', 1, 'graphed');
      expect((await store.repositories.documents.getDocument(scope, 'd1'))?.status).toBe('pending');
      await store.repositories.documents.setDocumentStatus(scope, 'd1', 2, 'failed', 'boom');
      expect(await store.repositories.documents.getDocument(scope, 'd1')).toMatchObject({ status: 'failed', error: 'boom' });
      expect(await store.repositories.documents.getDocumentText(scope, 'd1', 2)).toBe('text of d1 v2');
      expect(await store.repositories.documents.getDocument({ tenantId: 't2', kbId: scope.kbId }, 'd1')).toBeNull();
    });

    it('upserts chunks idempotently and finds the true nearest neighbours', async () => {
      await addDocument('d1');
      const chunks = Array.from({ length: 40 }, (_, i) => chunk('d1', 1, i, `chunk number ${i} about topic${i % 7}`, i + 1));
      await store.repositories.chunks.upsertChunks(scope, chunks);
      await store.repositories.chunks.upsertChunks(scope, chunks);
      expect((await store.repositories.chunks.listChunks(scope, 'd1', 1)).length).toBe(40);
      expect(await store.repositories.chunks.countChunksByStatus(scope, 'd1')).toEqual({ embedded: 40 });

      const query = vectorFor(12345);
      const expected = chunks
        .map((c) => ({ id: c.id, score: cosineSimilarity(query, c.embedding) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 5)
        .map((c) => c.id);
      const found = await store.repositories.chunks.searchChunksByVector(scope, query, 5);
      expect(found.map((f) => f.chunk.id)).toEqual(expected);
      expect(found[0]!.score).toBeCloseTo(cosineSimilarity(query, chunks.find((c) => c.id === expected[0])!.embedding), 4);
    });

    it('ranks chunks by full text and honours document filters', async () => {
      await addDocument('d1');
      await addDocument('d2');
      await store.repositories.chunks.upsertChunks(scope, [chunk('d1', 1, 0, 'Polonium was discovered by Marie Curie', 1), chunk('d2', 1, 0, 'Radium glows in the dark; radium is radioactive', 2)]);
      const hits = await store.repositories.chunks.searchChunksFullText(scope, 'radium', 5);
      expect(hits.map((h) => h.chunk.documentId)).toEqual(['d2']);
      expect(await store.repositories.chunks.searchChunksFullText(scope, 'radium', 5, { documentIds: ['d1'] })).toEqual([]);
      expect((await store.repositories.chunks.searchChunksByVector(scope, vectorFor(1), 5, { documentIds: ['d1'] })).map((h) => h.chunk.documentId)).toEqual(['d1']);
    });

    it('writes a chunk extraction idempotently and derives summaries from mentions', async () => {
      await addDocument('d1');
      const c = chunk('d1', 1, 0, 'Marie Curie discovered polonium', 1);
      await store.repositories.chunks.upsertChunks(scope, [c]);
      const curie = entity(scope, 'Marie Curie', 'A physicist.');
      const polonium = entity(scope, 'Polonium', 'An element.');
      const rel = relationship(curie, polonium, 'discovered', 'Curie discovered polonium in 1898.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [curie, polonium], [rel]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [curie, polonium], [rel]);
      const graph = await store.repositories.graphReads.exportGraph(scope);
      expect(graph.entities.map((e) => e.name).sort()).toEqual(['Marie Curie', 'Polonium']);
      expect(graph.relationships).toHaveLength(1);
      expect(graph.relationships[0]).toMatchObject({ sourceName: 'Marie Curie', targetName: 'Polonium', label: 'discovered', mentionCount: 1, weight: 5 });
      expect((await store.repositories.graphReads.chunkIdsForRelationships(scope, [rel.relationshipId])).get(rel.relationshipId)).toEqual([c.id]);
      expect((await store.repositories.graphReads.relationshipsOfEntities(scope, [curie.entityId])).map((r) => r.id)).toEqual([rel.relationshipId]);
      const sims = await store.repositories.graphReads.relationshipSimilarities(scope, rel.embedding, [rel.relationshipId]);
      expect(sims.get(rel.relationshipId)).toBeCloseTo(1, 2); // relationship vectors are int8 codes in memory
    });

    it('deleting a document leaves no orphan and none of its text in summaries', async () => {
      await addDocument('d1');
      await addDocument('d2');
      const c1 = chunk('d1', 1, 0, 'one', 1);
      const c2 = chunk('d2', 1, 0, 'two', 2);
      await store.repositories.chunks.upsertChunks(scope, [c1, c2]);
      const tidb1 = entity(scope, 'TiDB', 'A distributed SQL database.');
      const only1 = entity(scope, 'Only In One', 'Secret words from document one.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1.id, [tidb1, only1], [relationship(tidb1, only1, 'uses', 'Secret relation from one.')]);
      const tidb2 = entity(scope, 'TiDB', 'It speaks the MySQL protocol.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2.id, [tidb2], []);
      let [tidb] = await store.repositories.graphReads.getEntities(scope, [tidb1.entityId]);
      expect(tidb?.description).toContain('distributed SQL');
      expect(tidb?.mentionCount).toBe(2);

      expect(await store.repositories.documents.deleteDocument(scope, 'd1')).toBe(true);
      const graph = await store.repositories.graphReads.exportGraph(scope);
      expect(graph.entities.map((e) => e.name)).toEqual(['TiDB']);
      expect(graph.relationships).toEqual([]);
      [tidb] = await store.repositories.graphReads.getEntities(scope, [tidb1.entityId]);
      expect(tidb?.description).toBe('It speaks the MySQL protocol.');
      expect(tidb?.mentionCount).toBe(1);
      // Provenance: only the remaining chunk, and nothing pending still carries the deleted text.
      expect((await store.repositories.graphReads.chunkIdsForEntities(scope, [tidb1.entityId, only1.entityId])).get(tidb1.entityId)).toEqual([c2.id]);
      expect((await store.repositories.graphReads.chunkIdsForEntities(scope, [only1.entityId])).size).toBe(0);
      const pending = await store.repositories.graphSummaries.listPendingSummaries(scope, 100);
      expect(pending.flatMap((p) => p.descriptions).join(' ')).not.toMatch(/Secret|distributed/);
      expect(JSON.stringify(graph)).not.toMatch(/Secret|distributed/);
      expect(await store.repositories.chunks.getChunks(scope, [c1.id])).toEqual([]);
      expect(await store.repositories.chunks.searchChunksFullText(scope, 'one', 5)).toEqual([]);
      expect(await store.repositories.documents.getDocument(scope, 'd1')).toBeNull();
    });

    it('marks summaries pending when their mentions change and saves them only for that state', async () => {
      await addDocument('d1');
      const c1 = chunk('d1', 1, 0, 'one', 1);
      const c2 = chunk('d1', 1, 1, 'two', 2);
      await store.repositories.chunks.upsertChunks(scope, [c1, c2]);
      const first = entity(scope, 'TiDB', 'A distributed SQL database.');
      const other = entity(scope, 'TiKV', 'A key-value store.');
      const rel = relationship(first, other, 'stores data in', 'TiDB keeps its rows in TiKV.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1.id, [first, other], [rel]);
      // Fills any vector cache, so the re-embedding below must invalidate it.
      await store.repositories.graphReads.searchEntitiesByVector(scope, vectorFor(77), 5);

      const pending = await store.repositories.graphSummaries.listPendingSummaries(scope, 100);
      const tidbPending = pending.find((p) => p.id === first.entityId)!;
      expect(tidbPending).toMatchObject({ kind: 'entity', heading: 'TiDB (concept)', descriptions: ['A distributed SQL database.'] });
      expect(pending.find((p) => p.id === rel.relationshipId)).toMatchObject({ kind: 'relationship', heading: 'TiDB stores data in TiKV' });
      expect(await store.repositories.graphSummaries.listScopesWithPendingSummaries()).toEqual([scope]);
      expect(await store.repositories.graphSummaries.saveSummaries(scope, [{ ...tidbPending, description: 'Summary one.', embedding: vectorFor(77) }])).toBe(1);
      expect((await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).map((p) => p.id)).not.toContain(first.entityId);
      expect((await store.repositories.graphReads.getEntities(scope, [first.entityId]))[0]?.description).toBe('Summary one.');
      const [top] = await store.repositories.graphReads.searchEntitiesByVector(scope, vectorFor(77), 1);
      expect(top?.entity.id).toBe(first.entityId);
      expect(top?.score).toBeCloseTo(1, 4);
      const [candidate] = await store.repositories.graphWrites.listEntityCandidates(scope, ['tidb']);
      expect(candidate?.entity.id).toBe(first.entityId);
      expect(cosineSimilarity(candidate!.embedding, vectorFor(77))).toBeCloseTo(1, 4);

      // The same mentions again change nothing: the saved summary stays, nothing is pending.
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1.id, [first, other], [rel]);
      expect((await store.repositories.graphReads.getEntities(scope, [first.entityId]))[0]?.description).toBe('Summary one.');
      expect((await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).map((p) => p.id)).not.toContain(first.entityId);

      // A new mention: pending again, the plain concatenation meanwhile, and a save computed
      // from the older state is refused.
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2.id, [entity(scope, 'TiDB', 'It speaks MySQL.')], []);
      expect((await store.repositories.graphReads.getEntities(scope, [first.entityId]))[0]?.description).toBe('A distributed SQL database. It speaks MySQL.');
      const rest = (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).filter((p) => p.id !== first.entityId);
      await store.repositories.graphSummaries.saveSummaries(scope, rest.map((p) => ({ ...p, description: p.descriptions.join(' '), embedding: vectorFor(9) })));
      const again = (await store.repositories.graphSummaries.listPendingSummaries(scope, 100)).find((p) => p.id === first.entityId)!;
      expect(again.descriptions).toEqual(['A distributed SQL database.', 'It speaks MySQL.']);
      expect(await store.repositories.graphSummaries.saveSummaries(scope, [{ ...tidbPending, description: 'Stale.', embedding: vectorFor(5) }])).toBe(0);
      expect((await store.repositories.graphReads.getEntities(scope, [first.entityId]))[0]?.description).toBe('A distributed SQL database. It speaks MySQL.');
      await store.repositories.graphSummaries.saveSummaries(scope, [{ ...again, description: 'Summary two.', embedding: vectorFor(78) }]);
      expect(await store.repositories.graphSummaries.listScopesWithPendingSummaries()).toEqual([]);
    });

    it('flags an entity for review while every mention only names it', async () => {
      await addDocument('d1');
      const c1 = chunk('d1', 1, 0, 'one', 1);
      const c2 = chunk('d1', 1, 1, 'two', 2);
      await store.repositories.chunks.upsertChunks(scope, [c1, c2]);
      const named = { ...entity(scope, 'PD', ''), needsReview: true };
      await store.repositories.graphWrites.applyChunkExtraction(scope, c1.id, [named], []);
      expect((await store.repositories.graphReads.getEntities(scope, [named.entityId]))[0]?.needsReview).toBe(true);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2.id, [entity(scope, 'PD', 'The placement driver.')], []);
      expect((await store.repositories.graphReads.getEntities(scope, [named.entityId]))[0]?.needsReview).toBe(false);
      await store.repositories.graphWrites.applyChunkExtraction(scope, c2.id, [], []);
      expect((await store.repositories.graphReads.exportGraph(scope)).entities.map((e) => [e.name, e.needsReview])).toEqual([['PD', true]]);
    });

    it('removes what only stale versions of a document supported', async () => {
      await addDocument('d1');
      const old = chunk('d1', 1, 0, 'old words', 1);
      await store.repositories.chunks.upsertChunks(scope, [old]);
      const stale = entity(scope, 'Stale', 'Old fact.');
      await store.repositories.graphWrites.applyChunkExtraction(scope, old.id, [stale], []);
      await addDocument('d1', 2);
      const fresh = chunk('d1', 2, 0, 'new words', 2);
      await store.repositories.chunks.upsertChunks(scope, [fresh]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, fresh.id, [entity(scope, 'Fresh', 'New fact.')], []);
      // Old chunks are invisible to search once a newer version is current.
      expect((await store.repositories.chunks.searchChunksByVector(scope, vectorFor(1), 10)).map((h) => h.chunk.id)).toEqual([fresh.id]);
      expect(await store.repositories.documents.deleteStaleVersions(scope, 'd1', 2)).toBe(1);
      expect((await store.repositories.graphReads.exportGraph(scope)).entities.map((e) => e.name)).toEqual(['Fresh']);
      expect(await store.repositories.documents.getDocumentText(scope, 'd1', 1)).toBeNull();
    });

    it('lists what other chunks with the same content mention, for re-resolving re-indexed text', async () => {
      await addDocument('d1');
      const first = chunk('d1', 1, 0, 'same words', 1);
      await store.repositories.chunks.upsertChunks(scope, [first]);
      const mercury = { ...entity(scope, 'Mercury', 'A planet.'), entityId: 'ent-mercury-planet' };
      await store.repositories.graphWrites.applyChunkExtraction(scope, first.id, [mercury, entity(scope, 'Sun', 'A star.')], []);
      await addDocument('d1', 2);
      const again = chunk('d1', 2, 0, 'same words', 1);
      const other = chunk('d1', 2, 1, 'other words', 2);
      await store.repositories.chunks.upsertChunks(scope, [again, other]);
      const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
      expect((await store.repositories.graphWrites.entityMentionsOfSameContent(scope, again.id)).sort(byName)).toEqual([
        { name: 'Mercury', entityId: 'ent-mercury-planet' },
        { name: 'Sun', entityId: entity(scope, 'Sun', '').entityId },
      ]);
      expect(await store.repositories.graphWrites.entityMentionsOfSameContent(scope, first.id)).toEqual([]);
      expect(await store.repositories.graphWrites.entityMentionsOfSameContent(scope, other.id)).toEqual([]);
    });

    it('names an entity by its most common spelling, whatever order chunks are written in', async () => {
      await addDocument('d1');
      const chunks = [chunk('d1', 1, 0, 'a', 1), chunk('d1', 1, 1, 'b', 2), chunk('d1', 1, 2, 'c', 3)];
      await store.repositories.chunks.upsertChunks(scope, chunks);
      const spelled = (name: string) => ({ ...entity(scope, 'Beatles', `As ${name}.`), name });
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunks[0]!.id, [spelled('Beatles')], []);
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunks[1]!.id, [spelled('The Beatles')], []);
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunks[2]!.id, [spelled('The Beatles')], []);
      const [named] = await store.repositories.graphReads.getEntities(scope, [entity(scope, 'Beatles', '').entityId]);
      expect(named?.name).toBe('The Beatles');
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunks[1]!.id, [spelled('Beatles')], []);
      await store.repositories.graphWrites.applyChunkExtraction(scope, chunks[2]!.id, [spelled('Beatles')], []);
      expect((await store.repositories.graphReads.getEntities(scope, [named!.id]))[0]?.name).toBe('Beatles');
    });

    it('aggregates pipeline stages per document version and forgets them with the version', async () => {
      await addDocument('d1');
      const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
      await store.repositories.documents.recordStage(scope, { documentId: 'd1', version: 1, stage: 'extraction', startedAt: at(5), finishedAt: at(7) });
      await store.repositories.documents.recordStage(scope, { documentId: 'd1', version: 1, stage: 'extraction', startedAt: at(4), finishedAt: at(6), error: 'model busy' });
      await store.repositories.documents.recordStage(scope, { documentId: 'd1', version: 1, stage: 'chunking', startedAt: at(1), finishedAt: at(2) });
      const stages = await store.repositories.documents.listStages(scope, 'd1', 1);
      expect(stages.map((s) => s.stage)).toEqual(['chunking', 'extraction']);
      expect(stages[1]).toEqual({ stage: 'extraction', startedAt: at(4), finishedAt: at(7), durationMs: 3000, events: 2, failures: 1, lastError: 'model busy' });
      expect(await store.repositories.documents.listStages({ tenantId: 't2', kbId: scope.kbId }, 'd1', 1)).toEqual([]);
      await addDocument('d1', 2);
      await store.repositories.documents.recordStage(scope, { documentId: 'd1', version: 2, stage: 'chunking', startedAt: at(8), finishedAt: at(9) });
      await store.repositories.documents.deleteStaleVersions(scope, 'd1', 2);
      expect(await store.repositories.documents.listStages(scope, 'd1', 1)).toEqual([]);
      expect((await store.repositories.documents.listStages(scope, 'd1', 2)).map((s) => s.stage)).toEqual(['chunking']);
      await store.repositories.documents.deleteDocument(scope, 'd1');
      expect(await store.repositories.documents.listStages(scope, 'd1', 2)).toEqual([]);
    });

    it('finds documents by source, records unparseable ones, sets chunk status, saves chat turns', async () => {
      await addDocument('d1');
      expect((await store.repositories.documents.findDocumentBySource(scope, 'd1.txt'))?.id).toBe('d1');
      expect(await store.repositories.documents.findDocumentBySource(scope, 'missing.txt')).toBeNull();
      const failed = await store.repositories.documents.saveFailedDocument(
        scope,
        { id: 'bad', sourceUri: 'bad.pdf', filename: 'bad.pdf', mimeType: 'application/pdf', contentHash: 'bad', version: 1, sizeBytes: 3, metadata: {}, title: 'bad' },
        'not a PDF',
      );
      expect(failed).toMatchObject({ status: 'failed', error: 'not a PDF' });
      expect(await store.repositories.documents.countDocuments(scope)).toBe(2);
      expect(await store.repositories.documents.countDocuments({ tenantId: 't2', kbId: scope.kbId })).toBe(0);

      const c = chunk('d1', 1, 0, 'one chunk', 1);
      await store.repositories.chunks.upsertChunks(scope, [c]);
      await store.repositories.chunks.setChunkStatus(scope, c.id, 'failed', 'extraction refused');
      expect(await store.repositories.chunks.getChunk(scope, c.id)).toMatchObject({ status: 'failed', error: 'extraction refused' });
      expect(await store.repositories.chunks.getChunk({ tenantId: 't2', kbId: scope.kbId }, c.id)).toBeNull();

      await store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [entity(scope, 'Curie', 'A chemist.')], []);
      expect((await store.repositories.graphReads.findEntitiesByNormalizedName(scope, 'curie')).map((e) => e.name)).toEqual(['Curie']);
      await store.repositories.chats.saveChatTurn(scope, { chatId: 'chat-1', question: 'Who?', answer: 'Curie [1]', citations: [{ chunkId: c.id }] });
      await store.ping();
    });

    it('lists unfinished documents for re-driving and deletes a whole knowledge base', async () => {
      await addDocument('d1');
      await addDocument('d2');
      await store.repositories.documents.setDocumentStatus(scope, 'd2', 1, 'graphed');
      expect((await store.repositories.documents.listUnfinishedDocuments()).map((d) => d.documentId)).toEqual(['d1']);
      expect(await store.repositories.knowledgeBases.deleteKnowledgeBase(scope)).toBe(true);
      expect(await store.repositories.documents.listDocuments(scope)).toEqual([]);
      expect(await store.repositories.knowledgeBases.listKnowledgeBases({ tenantId: 't1' })).toEqual([]);
    });
  });
}
