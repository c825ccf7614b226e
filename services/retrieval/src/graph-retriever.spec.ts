import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { LocalHashEmbedder } from '@trellis/models';
import { SqliteStore } from '@trellis/storage';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import { GRAPH_STRATEGIES, GraphRetriever } from './graph-retriever';

const SETTINGS = { chunkSizeTokens: 0, chunkOverlapTokens: 0, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const embedder = new LocalHashEmbedder(64);

const entity = (name: string): EntityMentionWrite => ({ entityId: `ent-${name}`, name, normalizedName: name.toLowerCase(), type: 'x', description: '', embedding: embedder.embedOne(name) });

/** A relationship of strength 5 whose description and embedding are "source label target". */
const link = (id: string, source: EntityMentionWrite, target: EntityMentionWrite, label: string): RelationshipMentionWrite => ({
  relationshipId: id,
  sourceId: source.entityId,
  targetId: target.entityId,
  label,
  description: `${source.name} ${label} ${target.name}`,
  strength: 5,
  embedding: embedder.embedOne(`${source.name} ${label} ${target.name}`),
});

/** A store whose one chunk, of `text`, mentions these entities and relationships. */
async function graphOfOneChunk(text: string, entities: EntityMentionWrite[], relationships: RelationshipMentionWrite[]): Promise<{ store: SqliteStore; scope: KbScope }> {
  const store = new SqliteStore(':memory:');
  const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'kb', description: '', settings: SETTINGS });
  const scope = { tenantId: 't', kbId: kb.id };
  await store.repositories.documents.saveDocumentVersion(scope, { id: 'd', sourceUri: 'd', filename: 'd', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 1, metadata: {}, text });
  await store.repositories.chunks.upsertChunks(scope, [{ id: 'c1', documentId: 'd', version: 1, ordinal: 0, text, heading: '', tokenCount: 1, contentHash: 'h', embedding: embedder.embedOne(text) }]);
  await store.repositories.graphWrites.applyChunkExtraction(scope, 'c1', entities, relationships);
  return { store, scope };
}

/** A user's negative weight on a relationship keeps it out of every graph strategy, over a real store. */
describe('GraphRetriever and negatively weighted relationships', () => {
  let store: SqliteStore;
  let scope: KbScope;

  const [lanterns, odile, ravensford] = [entity('Lanterns'), entity('Odile'), entity('Ravensford')];
  const directed = link('rel-directed', odile, lanterns, 'directed');
  const born = link('rel-born', odile, ravensford, 'was born in');

  beforeEach(async () => {
    ({ store, scope } = await graphOfOneChunk('x', [lanterns, odile, ravensford], [directed, born]));
  });

  afterEach(async () => {
    await store.close();
  });

  const question = 'Where was Odile, who directed Lanterns, born? Ravensford?';

  it.each(GRAPH_STRATEGIES)('%s: walks the relationship until a user weights it negative', async (strategy) => {
    const retriever = new GraphRetriever(store.repositories.graphReads, store.repositories.chunks);
    const vector = embedder.embedOne(question);
    const options = { depth: 2, maxRelationships: 10, strategy };
    const before = await retriever.retrieve(scope, vector, question, options);
    expect(before.relationships.map((r) => r.relationship.id)).toContain(born.relationshipId);

    await store.repositories.graphEdits.updateRelationship(scope, born.relationshipId, { weight: -1 }, { id: 'e1', actor: 'a', at: new Date().toISOString() });
    const after = await retriever.retrieve(scope, vector, question, options);
    expect(after.relationships.map((r) => r.relationship.id)).not.toContain(born.relationshipId);
    expect(after.relationships.map((r) => r.relationship.id)).toContain(directed.relationshipId);
    expect((await store.repositories.graphReads.searchRelationshipsByVector(scope, born.embedding, 10)).map((s) => s.relationship.id)).toEqual([directed.relationshipId]);
    // Still in the graph, with its weight, for reads.
    expect((await store.repositories.graphReads.exportGraph(scope)).relationships.find((r) => r.id === born.relationshipId)?.weight).toBe(-1);
  });
});

/** Both walks expand from a hub within the same bound: its heaviest edges, not all of them. */
describe('GraphRetriever at a hub', () => {
  const SPOKES = 130;
  let store: SqliteStore;
  let scope: KbScope;

  const hub = entity('Meridian');
  const spokes = Array.from({ length: SPOKES }, (_, i) => entity(`Spoke${i}`));
  // Spoke i's edge is stated with strength 1 + i % 10, so the heaviest are the spokes ending in 9.
  const edges: RelationshipMentionWrite[] = spokes.map((spoke, i) => ({
    relationshipId: `rel-${i}`,
    sourceId: hub.entityId,
    targetId: spoke.entityId,
    label: 'hosts',
    description: `Meridian hosts ${spoke.name}`,
    strength: 1 + (i % 10),
    embedding: embedder.embedOne(`Meridian hosts ${spoke.name}`),
  }));

  beforeEach(async () => {
    ({ store, scope } = await graphOfOneChunk('Meridian', [hub, ...spokes], edges));
  });

  afterEach(async () => {
    await store.close();
  });

  it.each(GRAPH_STRATEGIES)('%s: reads at most 100 of the hub’s edges from its end, the heaviest', async (strategy) => {
    const graphReads = store.repositories.graphReads;
    const read: string[][] = [];
    const recording = new Proxy(graphReads, {
      get: (target, name) =>
        name === 'relationshipEdgesOfEntities'
          ? async (...args: Parameters<typeof graphReads.relationshipEdgesOfEntities>) => {
              const edges = await target.relationshipEdgesOfEntities(...args);
              read.push(edges.map((e) => e.id));
              return edges;
            }
          : Reflect.get(target, name),
    });
    const question = 'What does Meridian host?';
    const result = await new GraphRetriever(recording, store.repositories.chunks).retrieve(scope, embedder.embedOne(question), question, { depth: 2, maxRelationships: 10, strategy });

    expect(result.relationships.length).toBeGreaterThan(0);
    expect(read.length).toBeGreaterThan(0);
    const lightest = new Set(edges.filter((e) => e.strength === 1).map((e) => e.relationshipId));
    for (const ids of read) {
      // The hub's end gives 100 edges; the other ends read (at most the 12 of a frontier) give their one each.
      expect(ids.length).toBeLessThanOrEqual(100 + 12);
      // The 13 edges of strength 1 are the lightest: the hub's end leaves them out, so at most a spoke's end reads one.
      expect(ids.filter((id) => lightest.has(id)).length).toBeLessThanOrEqual(12);
    }
  });
});

/** Chunk retrieval wants the walk's passage ranking only: ppr then reads no entity or relationship rows. */
describe('GraphRetriever for passages only', () => {
  const [lanterns, odile, ravensford] = [entity('Lanterns'), entity('Odile'), entity('Ravensford')];

  it('ppr ranks the same passages and entities, reading no rows of what it walked', async () => {
    const { store, scope } = await graphOfOneChunk('Odile directed Lanterns. Odile was born in Ravensford.', [lanterns, odile, ravensford], [link('rel-directed', odile, lanterns, 'directed'), link('rel-born', odile, ravensford, 'was born in')]);
    const graphReads = store.repositories.graphReads;
    const rowReads: string[] = [];
    const recording = new Proxy(graphReads, {
      get: (target, name) => {
        const value = Reflect.get(target, name) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (name === 'getEntities' || name === 'getRelationships') rowReads.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const retriever = new GraphRetriever(recording, store.repositories.chunks);
    const question = 'Where was Odile, who directed Lanterns, born?';
    const vector = embedder.embedOne(question);
    const options = { depth: 1, maxRelationships: 10, strategy: 'ppr' as const };

    const whole = await retriever.retrieve(scope, vector, question, options);
    expect(rowReads.length).toBeGreaterThan(0);
    expect(whole.relationships.length).toBeGreaterThan(0);
    rowReads.length = 0;
    const passages = await retriever.retrieve(scope, vector, question, { ...options, passagesOnly: true });
    expect(rowReads).toEqual([]);
    expect([...passages.passageScores!]).toEqual([...whole.passageScores!]);
    expect([...passages.entityScores]).toEqual([...whole.entityScores]);
    expect(passages.passageScores!.has('c1')).toBe(true);
    await store.close();
  });
});
