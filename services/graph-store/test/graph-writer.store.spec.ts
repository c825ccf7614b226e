import { testStores } from './test-stores';
import { afterAll, describe, expect, it } from 'vitest';
import { stableId, toEventSettings } from '@trellis/contracts';
import type { events, KbScope, KbSettings } from '@trellis/contracts';
import type { ResolutionDefaults } from '@trellis/config';
import type { EmbeddingProvider } from '@trellis/models';
import { SummaryRefresher, embedDescribed } from '@trellis/graph';
import { cosineSimilarity } from '@trellis/models';
import type { ExtractionResult, TrellisStore } from '@trellis/storage';
import { fakeEmbedding } from '@trellis/testing';
import { EntityResolver } from '../src/entity-resolver';
import { GraphWriterService } from '../src/graph-writer.service';

/**
 * The graph writer with its resolver and summary refresher on a real store — SQLite always,
 * the MySQL adapter (MariaDB or TiDB) when TRELLIS_TEST_MYSQL_URL is set — with bag-of-words
 * embeddings (texts sharing words are close), as the fake OpenAI server computes them.
 */

const embedder: EmbeddingProvider = {
  model: 'bag-of-words',
  dimensions: 256,
  embed: async (texts) => texts.map((t) => Float32Array.from(fakeEmbedding(t, 256))),
};
const DEFAULTS: ResolutionDefaults = { mode: 'embedding', similarityThreshold: 0.6, llmMergeDecisions: false, llmMergeFloor: 0.4, summaryMaxChars: 2000 };
const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };

const TEXTS: Record<string, ExtractionResult> = {
  pingcap: {
    entities: [
      { name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database created by PingCAP.' },
      { name: 'PingCAP', type: 'company', description: 'PingCAP is the company behind TiDB.' },
    ],
    relationships: [{ source: 'PingCAP', target: 'TiDB', label: 'created', description: 'PingCAP created TiDB.', strength: 9 }],
  },
  mysql: {
    entities: [{ name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database that speaks the MySQL protocol.' }],
    relationships: [{ source: 'TiDB', target: 'MySQL', label: 'is compatible with', description: 'TiDB speaks the MySQL protocol.', strength: 8 }],
  },
  tiflash: {
    entities: [{ name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database that keeps analytical replicas in TiFlash.' }],
    relationships: [],
  },
  planet: { entities: [{ name: 'Mercury', type: 'planet', description: 'Mercury is the smallest planet of the solar system and the closest to the Sun.' }], relationships: [] },
  element: { entities: [{ name: 'Mercury', type: 'chemical element', description: 'Mercury is a toxic heavy metal, liquid at room temperature, symbol Hg.' }], relationships: [] },
};

const { stores, dropDatabases } = testStores();

describe.each(stores)('GraphWriterService with entity resolution on %s', (_name, makeStore) => {
  const open: TrellisStore[] = [];
  afterAll(async () => {
    for (const store of open) await store.close();
    await dropDatabases();
  });

  async function setup(kbName: string) {
    const store = open[0] ?? (await makeStore());
    if (open.length === 0) open.push(store);
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: kbName, description: '', settings: SETTINGS });
    const scope: KbScope = { tenantId: 't', kbId: kb.id };
    const refresher = new SummaryRefresher(store.repositories.graphSummaries, { embed: (texts) => embedder.embed(texts), summarize: null });
    let retries = 0;
    const writer = new GraphWriterService(store.repositories, embedder, new EntityResolver(null), refresher, DEFAULTS, true, undefined, () => retries++);
    /** Stores a one-chunk version of a document and writes its (cached) extraction to the graph. */
    const index = async (name: string, key: keyof typeof TEXTS, version = 1, knowledgeBase?: events.KnowledgeBaseSettings, into = writer) => {
      // Document ids are unique per deployment in real use (derived from tenant, KB and source).
      const documentId = `${kbName}-${name}`;
      const text = `${documentId} v${version}: ${key}`;
      await store.repositories.documents.saveDocumentVersion(scope, { id: documentId, sourceUri: documentId, filename: documentId, mimeType: 'text/plain', contentHash: stableId('h', text), version, sizeBytes: 1, metadata: {}, text });
      const chunkId = stableId('chk', scope.kbId, documentId, version, 0);
      await store.repositories.chunks.upsertChunks(scope, [{ id: chunkId, documentId, version, ordinal: 0, text, heading: '', tokenCount: 3, contentHash: stableId('h', text), embedding: await embedder.embed([text]).then((v) => v[0]!) }]);
      const extractionKey = stableId('ext', key);
      await store.repositories.extractionCache.putCachedExtraction(scope, extractionKey, TEXTS[key]!);
      await into.onChunkExtracted({ context: { tenantId: 't', knowledgeBaseId: scope.kbId, documentId, documentVersion: version, traceparent: '', knowledgeBase }, chunkId, extractionKey });
    };
    const entities = async (name: string) => (await store.repositories.graphReads.exportGraph(scope)).entities.filter((e) => e.name === name);
    /** How close an entity's stored embedding is to the embedding of its current summary. */
    const embeddingMatchesSummary = async (entityId: string) => {
      const [candidate] = (await store.repositories.graphWrites.listEntityCandidates(scope, [(await store.repositories.graphReads.getEntities(scope, [entityId]))[0]!.normalizedName])).filter((c) => c.entity.id === entityId);
      // Every description in TEXTS is one sentence: the summary's parts are its sentences.
      const descriptions = candidate!.entity.description.split(/(?<=\.) /);
      const [expected] = await embedDescribed((texts) => embedder.embed(texts), [{ heading: `${candidate!.entity.name} (${candidate!.entity.type})`, descriptions }]);
      return cosineSimilarity(candidate!.embedding, expected!);
    };
    /** A writer that fails if it reads the knowledge base's settings from the store. */
    const noSettingsReads = new GraphWriterService(
      { ...store.repositories, knowledgeBases: { ...store.repositories.knowledgeBases, findKnowledgeBase: () => Promise.reject(new Error('read the settings per chunk')) } },
      embedder, new EntityResolver(null), refresher, DEFAULTS, true,
    );
    return { store, scope, index, entities, embeddingMatchesSummary, refresher, writer, noSettingsReads, retries: () => retries };
  }

  it('merges TiDB across documents, keeps the two Mercurys apart, in either order', async () => {
    const forward = await setup('forward');
    for (const [doc, key] of [['a', 'pingcap'], ['b', 'mysql'], ['c', 'planet'], ['d', 'element']] as const) await forward.index(doc, key);
    const backward = await setup('backward');
    for (const [doc, key] of [['d', 'element'], ['c', 'planet'], ['b', 'mysql'], ['a', 'pingcap']] as const) await backward.index(doc, key);

    for (const { entities, embeddingMatchesSummary } of [forward, backward]) {
      const [tidb, ...more] = await entities('TiDB');
      expect(more).toEqual([]);
      expect(tidb!.mentionCount).toBe(2);
      expect(await embeddingMatchesSummary(tidb!.id)).toBeCloseTo(1, 5);
      expect((await entities('Mercury')).map((m) => m.type).sort()).toEqual(['chemical element', 'planet']);
    }
    // Which Mercury keeps the name's own id depends on which was seen first; the grouping does not.
    const shape = async (s: typeof forward) =>
      (await s.store.repositories.graphReads.exportGraph(s.scope)).entities.map((e) => `${e.name}|${e.type}|${e.mentionCount}|${[...e.description.split(/(?<=\.) /)].sort().join(' ')}`).sort();
    expect(await shape(backward)).toEqual(await shape(forward));
  });

  it('keeps the two Mercurys apart when their first mentions are written side by side', async () => {
    const kb = await setup('lockstep');
    // Both writes read the candidates (none yet) before either writes, as concurrent writes do.
    const graphWrites = kb.store.repositories.graphWrites;
    const bothRead = barrier(2);
    let retries = 0;
    const lockstep = new GraphWriterService(
      { ...kb.store.repositories, graphWrites: Object.assign(Object.create(graphWrites) as typeof graphWrites, { listEntityCandidates: async (...args: Parameters<typeof graphWrites.listEntityCandidates>) => bothRead(await graphWrites.listEntityCandidates(...args)) }) },
      embedder, new EntityResolver(null), kb.refresher, DEFAULTS, true, undefined, () => retries++,
    );
    await Promise.all([kb.index('c', 'planet', 1, undefined, lockstep), kb.index('d', 'element', 1, undefined, lockstep)]);
    expect((await kb.entities('Mercury')).map((m) => `${m.type} ${m.mentionCount}`).sort()).toEqual(['chemical element 1', 'planet 1']);
    expect(retries).toBe(1);
  });

  it('joins an entity renamed by hand that holds the id of the name a new mention uses, as before', async () => {
    const kb = await setup('renamed');
    await kb.index('c', 'planet');
    const [mercury] = await kb.entities('Mercury');
    await kb.store.repositories.graphEdits.updateEntity(kb.scope, mercury!.id, { name: 'Hermes', normalizedName: 'hermes' }, { id: 'edit-1', actor: 'test', at: new Date().toISOString() });
    const retriesBefore = kb.retries();
    await kb.index('d', 'element');
    // No candidate is named Mercury any more, so the mention meant to create Mercury's id, which
    // the renamed entity holds: one more attempt, then it joins it.
    expect((await kb.entities('Hermes')).map((e) => e.mentionCount)).toEqual([2]);
    expect(await kb.entities('Mercury')).toEqual([]);
    expect(kb.retries() - retriesBefore).toBe(1);
  });

  it('a new version replaces the old facts and re-embeds; a delete leaves none of its text', async () => {
    const kb = await setup('lifecycle');
    await kb.index('a', 'pingcap');
    await kb.index('b', 'mysql');
    await kb.index('b', 'tiflash', 2);
    let graph = await kb.store.repositories.graphReads.exportGraph(kb.scope);
    expect(JSON.stringify(graph)).not.toMatch(/MySQL/);
    const [tidb] = await kb.entities('TiDB');
    expect(tidb!.description).toContain('TiFlash');
    expect(await kb.embeddingMatchesSummary(tidb!.id)).toBeCloseTo(1, 5);

    await kb.store.repositories.documents.deleteDocument(kb.scope, 'lifecycle-a');
    await kb.refresher.refresh(kb.scope, 2000);
    graph = await kb.store.repositories.graphReads.exportGraph(kb.scope);
    expect(graph.entities.map((e) => e.name)).toEqual(['TiDB']);
    expect(graph.relationships).toEqual([]);
    expect(JSON.stringify(graph)).not.toMatch(/PingCAP/);
    expect(await kb.embeddingMatchesSummary(tidb!.id)).toBeCloseTo(1, 5);
    expect(await kb.store.repositories.graphSummaries.listPendingSummaries(kb.scope, 10)).toEqual([]);
    expect((await kb.store.repositories.graphReads.chunkIdsForEntities(kb.scope, [tidb!.id])).get(tidb!.id)).toHaveLength(1);
  });

  it('finishes at start-up the summaries a crash left pending', async () => {
    const kb = await setup('crash');
    await kb.index('a', 'pingcap');
    const [tidb] = await kb.entities('TiDB');
    // A graph change committed, then the process died before re-summarising and re-embedding.
    const chunkId = stableId('chk', kb.scope.kbId, 'crash-a', 1, 0);
    await kb.store.repositories.graphWrites.applyChunkExtraction(kb.scope, chunkId, [{ ...TEXTS.tiflash!.entities[0]!, entityId: tidb!.id, normalizedName: 'tidb', embedding: new Float32Array(256) }], []);
    expect(await kb.embeddingMatchesSummary(tidb!.id)).toBeLessThan(0.99);
    expect(await kb.store.repositories.graphSummaries.listScopesWithPendingSummaries()).toContainEqual(kb.scope);
    expect(await kb.writer.refreshPendingSummaries()).toBeGreaterThan(0);
    expect(await kb.store.repositories.graphSummaries.listScopesWithPendingSummaries()).toEqual([]);
    expect(await kb.embeddingMatchesSummary(tidb!.id)).toBeCloseTo(1, 5);
  });

  it('resolves with the settings the event carries, reading none from the store', async () => {
    const kb = await setup('carried');
    // Stored: the embedding default, which keeps the two Mercurys apart. Carried: names only.
    const carried = toEventSettings({ name: 'carried', settings: { ...SETTINGS, resolution: { mode: 'name', similarityThreshold: 0, llmMergeDecisions: '', llmMergeFloor: 0, summaryMaxChars: 0 } } });
    await kb.index('c', 'planet', 1, carried, kb.noSettingsReads);
    await kb.index('d', 'element', 1, carried, kb.noSettingsReads);
    expect((await kb.entities('Mercury')).map((m) => m.mentionCount)).toEqual([2]);
  });

  it('completes a version when its last chunk is graphed, not earlier, however often a chunk is redelivered', async () => {
    const kb = await setup('replay');
    await kb.index('a', 'pingcap');
    const documentId = 'replay-a';
    const text = (ordinal: number) => `${documentId} v2 part ${ordinal}`;
    await kb.store.repositories.documents.saveDocumentVersion(kb.scope, { id: documentId, sourceUri: documentId, filename: documentId, mimeType: 'text/plain', contentHash: 'v2', version: 2, sizeBytes: 1, metadata: {}, text: 'v2' });
    const chunkIds = [0, 1].map((ordinal) => stableId('chk', kb.scope.kbId, documentId, 2, ordinal));
    await kb.store.repositories.chunks.upsertChunks(
      kb.scope,
      await Promise.all([0, 1].map(async (ordinal) => ({ id: chunkIds[ordinal]!, documentId, version: 2, ordinal, text: text(ordinal), heading: '', tokenCount: 4, contentHash: stableId('h', text(ordinal)), embedding: (await embedder.embed([text(ordinal)]))[0]! }))),
    );
    await kb.store.repositories.extractionCache.putCachedExtraction(kb.scope, stableId('ext', 'tiflash'), TEXTS.tiflash!);
    const deliver = (chunkId: string) =>
      kb.writer.onChunkExtracted({ context: { tenantId: 't', knowledgeBaseId: kb.scope.kbId, documentId, documentVersion: 2, traceparent: '', knowledgeBase: undefined }, chunkId, extractionKey: stableId('ext', 'tiflash') });
    await deliver(chunkIds[0]!);
    await deliver(chunkIds[0]!);
    expect((await kb.store.repositories.documents.getDocument(kb.scope, documentId))?.status).toBe('pending');
    // Version 1's facts stay until version 2 is complete.
    expect((await kb.entities('PingCAP')).length).toBe(1);
    await deliver(chunkIds[1]!);
    expect((await kb.store.repositories.documents.getDocument(kb.scope, documentId))?.status).toBe('graphed');
    expect(await kb.entities('PingCAP')).toEqual([]);
    await deliver(chunkIds[1]!);
    expect((await kb.store.repositories.documents.getDocument(kb.scope, documentId))?.status).toBe('graphed');
  });
});

/** Holds the first `parties` callers until all of them have arrived; later ones pass straight through. */
function barrier(parties: number): <T>(value: T) => Promise<T> {
  const waiting: Array<() => void> = [];
  return <T>(value: T) => {
    if (waiting.length >= parties) return Promise.resolve(value);
    return new Promise<T>((resolve) => {
      waiting.push(() => resolve(value));
      if (waiting.length === parties) for (const release of waiting) release();
    });
  };
}
