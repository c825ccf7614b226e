import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS, chunk, saveTestDocument, vectorFor } from './store-contract';

/**
 * A database from before migration 22, whose relationships were indexed by one end alone, reads
 * the same edges once migrated, from the endpoint indexes that now cover them: those of 22, then
 * 26's, which order an entity's edges by weight. `rewind` takes the store back to before 22 (the
 * first schema's indexes, the records of 22 and 26 gone) and resolves to the store migrated
 * again; `indexesOf` lists the names of the relationships table's indexes.
 */
export function describeEdgeIndexUpgrade(
  name: string,
  makeStore: () => Promise<TrellisStore>,
  rewind: (store: TrellisStore) => Promise<TrellisStore>,
  indexesOf: (store: TrellisStore) => Promise<string[]>,
): void {
  describe(`${name}: relationship edges of a database from before their covering indexes`, () => {
    it('reads the same edges once migrated, and the endpoint indexes of the first schema and of migration 22 are gone', async () => {
      let store = await makeStore();
      try {
        const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
        const scope = { tenantId: 't1', kbId: kb.id };
        await saveTestDocument(store, scope, 'd1');
        const written = chunk('d1', 1, 0, 'Marie Curie discovered polonium; radium was found by her', 1);
        await store.repositories.chunks.upsertChunks(scope, [written]);
        const [curie, polonium, radium] = ['Marie Curie', 'Polonium', 'Radium'].map(
          (n): EntityMentionWrite => ({ entityId: stableId('ent', kb.id, n.toLowerCase()), name: n, normalizedName: n.toLowerCase(), type: 'x', description: '', embedding: vectorFor(n.length) }),
        ) as [EntityMentionWrite, EntityMentionWrite, EntityMentionWrite];
        const fact = (source: EntityMentionWrite, target: EntityMentionWrite, label: string): RelationshipMentionWrite => ({
          relationshipId: stableId('rel', source.entityId, label, target.entityId),
          sourceId: source.entityId,
          targetId: target.entityId,
          label,
          description: '',
          strength: 5,
          embedding: vectorFor(label.length),
        });
        await store.repositories.graphWrites.applyChunkExtraction(scope, written.id, [curie, polonium, radium], [fact(curie, polonium, 'discovered'), fact(radium, curie, 'found by')]);
        const edges = () => store.repositories.graphReads.relationshipEdgesOfEntities(scope, [curie.entityId]);
        const heaviest = () => store.repositories.graphReads.relationshipEdgesOfEntities(scope, [curie.entityId, radium.entityId], 1);
        const before = await edges();
        expect(before.map((e) => [e.sourceId, e.targetId])).toEqual(expect.arrayContaining([[curie.entityId, polonium.entityId], [radium.entityId, curie.entityId]]));
        const heaviestBefore = await heaviest();
        expect(heaviestBefore).toEqual(before);

        store = await rewind(store);
        expect(await edges()).toEqual(before);
        expect(await heaviest()).toEqual(heaviestBefore);
        const indexes = await indexesOf(store);
        expect(indexes).toEqual(expect.arrayContaining(['relationship_heaviest_by_source', 'relationship_heaviest_by_target']));
        expect(indexes.filter((i) => /^relationships?_(edges_)?by_(source|target)$/.test(i))).toEqual([]);
      } finally {
        await store.close();
      }
    });
  });
}
