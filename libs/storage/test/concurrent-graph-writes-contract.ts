import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { TrellisStore } from '../src/trellis-store';
import { chunk, eachStoreWithKnowledgeBase, entity, saveTestDocument } from './store-contract';

/**
 * Chunk extractions written into the graph at the same time, for every TrellisStore adapter:
 * writers of one entity meet on one row, and a writer told an entity is new learns when another
 * created it first, with nothing of its own written.
 */
export function describeConcurrentGraphWritesContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: concurrent graph writes`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const addDocument = (id: string, version = 1) => saveTestDocument(store, scope, id, version);

    it('ends with one entity row when two writers upsert the same entity at once', async () => {
      await addDocument('d1');
      const a = chunk('d1', 1, 0, 'a', 1);
      const b = chunk('d1', 1, 1, 'b', 2);
      await store.repositories.chunks.upsertChunks(scope, [a, b]);
      await Promise.all([
        store.repositories.graphWrites.applyChunkExtraction(scope, a.id, [entity(scope, 'Shared', 'From a.')], []),
        store.repositories.graphWrites.applyChunkExtraction(scope, b.id, [entity(scope, 'Shared', 'From b.')], []),
      ]);
      const graph = await store.repositories.graphReads.exportGraph(scope);
      expect(graph.entities).toHaveLength(1);
      expect(graph.entities[0]!.mentionCount).toBe(2);
    });

    it('writes nothing when an entity meant to be new was created meanwhile, however the writes interleave', async () => {
      await addDocument('d1');
      const [a, b, c] = [chunk('d1', 1, 0, 'a', 1), chunk('d1', 1, 1, 'b', 2), chunk('d1', 1, 2, 'c', 3)];
      await store.repositories.chunks.upsertChunks(scope, [a, b, c]);
      const planet = entity(scope, 'Mercury', 'The smallest planet.');
      const element = { ...entity(scope, 'Mercury', 'A liquid metal.'), type: 'chemical element' };
      const outcomes = await Promise.all([
        store.repositories.graphWrites.applyChunkExtraction(scope, a.id, [planet], [], new Set([planet.entityId])),
        store.repositories.graphWrites.applyChunkExtraction(scope, b.id, [element], [], new Set([element.entityId])),
      ]);
      expect(outcomes.sort()).toEqual(['entity-taken', 'written']);
      const graph = await store.repositories.graphReads.exportGraph(scope);
      expect(graph.entities).toHaveLength(1);
      expect(graph.entities[0]!.mentionCount).toBe(1);
      // The losing write left no mention behind.
      expect((await store.repositories.graphReads.chunkIdsForEntities(scope, [planet.entityId])).get(planet.entityId)).toHaveLength(1);

      // Told nothing is new, a write joins the existing row, as before; a chunk that is gone is said to be.
      expect(await store.repositories.graphWrites.applyChunkExtraction(scope, c.id, [element], [])).toBe('written');
      expect((await store.repositories.graphReads.exportGraph(scope)).entities[0]!.mentionCount).toBe(2);
      expect(await store.repositories.graphWrites.applyChunkExtraction(scope, 'no-such-chunk', [element], [], new Set([element.entityId]))).toBe('no-chunk');
    });
  });
}
