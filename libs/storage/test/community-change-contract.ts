import { describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import type { CommunityWrite, EntityMentionWrite, RelationshipMentionWrite } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { eachStoreWithKnowledgeBase, saveTestDocument, vectorFor } from './store-contract';

/**
 * What a refresh local to a change needs of every TrellisStore adapter: graph writes, document
 * deletions and edits record the entities they change (both ends of a relationship), a save
 * consumes exactly the records its refresh read, and communities are found by their members.
 */
export function describeCommunityChangeContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: community change records`, () => {
    let store: TrellisStore;
    let scope: KbScope;

    eachStoreWithKnowledgeBase(makeStore, (s, k) => {
      store = s;
      scope = k;
    });

    const entity = (name: string): EntityMentionWrite => {
      const normalizedName = name.toLowerCase();
      return { entityId: stableId('ent', scope.kbId, normalizedName), name, normalizedName, type: 'thing', description: `${name}.`, embedding: vectorFor(name.length) };
    };
    const relationship = (a: EntityMentionWrite, b: EntityMentionWrite): RelationshipMentionWrite => ({
      relationshipId: stableId('rel', scope.kbId, a.normalizedName, b.normalizedName),
      sourceId: a.entityId,
      targetId: b.entityId,
      label: 'relates to',
      description: `${a.name} and ${b.name}.`,
      strength: 5,
      embedding: vectorFor(3),
    });
    const chunk = async (documentId: string, ordinal: number) => {
      const id = stableId('chk', documentId, 1, ordinal);
      await store.repositories.chunks.upsertChunks(scope, [{ id, documentId, version: 1, ordinal, text: `${documentId} ${ordinal}`, heading: '', tokenCount: 2, contentHash: id, embedding: vectorFor(ordinal + 1) }]);
      return id;
    };
    const changedIds = async () => (await store.repositories.communities.listCommunityChanges(scope)).marks.map((m) => m.entityId).sort();
    const consumeAll = async () => store.repositories.communities.saveCommunities(scope, { upserts: [], removedIds: [], consumedChanges: (await store.repositories.communities.listCommunityChanges(scope)).marks }, new Date().toISOString());

    it('records what a graph write changes, both ends of each relationship; a save consumes exactly the records it read', async () => {
      const [a, b, c] = [entity('Alpha'), entity('Beta'), entity('Gamma')];
      await saveTestDocument(store, scope, 'd1');
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d1', 0), [a, b, c], [relationship(a, b)]);
      const first = await store.repositories.communities.listCommunityChanges(scope);
      // Never refreshed: the records are not the whole story yet (the first build reads the graph).
      expect(first.tracked).toBe(false);
      expect(first.marks.map((m) => m.entityId).sort()).toEqual([a.entityId, b.entityId, c.entityId].sort());

      // Alpha changes again after the refresh read the records: its newer record outlives the save.
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d1', 1), [a], []);
      await store.repositories.communities.saveCommunities(scope, { upserts: [], removedIds: [], consumedChanges: first.marks }, new Date().toISOString());
      const after = await store.repositories.communities.listCommunityChanges(scope);
      expect(after.tracked).toBe(true);
      expect(after.marks).toEqual([{ entityId: a.entityId, version: first.marks.find((m) => m.entityId === a.entityId)!.version + 1 }]);
    });

    it('records what a deleted document took and what it touched', async () => {
      const [a, b, c] = [entity('Alpha'), entity('Beta'), entity('Gamma')];
      await saveTestDocument(store, scope, 'd1');
      await saveTestDocument(store, scope, 'd2');
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d1', 0), [a, b], [relationship(a, b)]);
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d2', 0), [b, c], [relationship(b, c)]);
      await consumeAll();
      expect(await changedIds()).toEqual([]);
      await store.repositories.documents.deleteDocument(scope, 'd1');
      // Alpha is gone; Beta lost a relationship and a description; Gamma is untouched.
      expect(await changedIds()).toEqual([a.entityId, b.entityId].sort());
    });

    it('records what graph edits change: a weight both ends, a deletion the entity and its neighbours, a merge both sides', async () => {
      const [a, b, c, d] = [entity('Alpha'), entity('Beta'), entity('Gamma'), entity('Delta')];
      await saveTestDocument(store, scope, 'd1');
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d1', 0), [a, b, c, d], [relationship(a, b), relationship(c, d)]);
      let edits = 0;
      const meta = () => ({ id: `edit-${++edits}`, actor: 'test', at: new Date(Date.UTC(2026, 0, 1, 0, 0, edits)).toISOString() });
      await consumeAll();

      await store.repositories.graphEdits.updateRelationship(scope, relationship(a, b).relationshipId, { weight: -1 }, meta());
      expect(await changedIds()).toEqual([a.entityId, b.entityId].sort());
      await consumeAll();
      await store.repositories.graphEdits.deleteEntity(scope, c.entityId, meta());
      expect(await changedIds()).toEqual([c.entityId, d.entityId].sort());
      await consumeAll();
      await store.repositories.graphEdits.mergeEntities(scope, b.entityId, a.entityId, meta());
      expect(await changedIds()).toEqual(expect.arrayContaining([a.entityId, b.entityId]));
    });

    it('finds communities by their members, every level, and counts them; scoped by tenant', async () => {
      const row = (id: string, level: number, memberIds: string[], parentId: string | null): CommunityWrite => ({
        id,
        level,
        parentId,
        title: id,
        summary: id,
        keyFacts: [],
        kind: 'extractive',
        contentHash: id.padEnd(64, '0'),
        memberIds,
        embedding: new Float32Array(0),
      });
      const upserts = [row('c1', 0, ['e1', 'e2'], 'p1'), row('c2', 0, ['e3', 'e4'], 'p1'), row('p1', 1, ['e1', 'e2', 'e3', 'e4'], null), row('c3', 0, ['e5', 'e6'], null)];
      await store.repositories.communities.saveCommunities(scope, { upserts, removedIds: [] }, new Date().toISOString());
      expect((await store.repositories.communities.listCommunitiesOfEntities(scope, ['e1', 'e2', 'nobody'])).map((c) => [c.id, c.memberIds])).toEqual([
        ['c1', ['e1', 'e2']],
        ['p1', ['e1', 'e2', 'e3', 'e4']],
      ]);
      expect(await store.repositories.communities.listCommunitiesOfEntities(scope, [])).toEqual([]);
      expect(await store.repositories.communities.listAssignedEntities(scope, ['e6', 'e1', 'e9'])).toEqual(['e1', 'e6']);
      expect(await store.repositories.communities.countCommunities(scope)).toEqual({ communities: 4, levels: 2 });
      const other = { tenantId: 'someone-else', kbId: scope.kbId };
      expect(await store.repositories.communities.listCommunitiesOfEntities(other, ['e1'])).toEqual([]);
      expect(await store.repositories.communities.listAssignedEntities(other, ['e1'])).toEqual([]);
      expect(await store.repositories.communities.countCommunities(other)).toEqual({ communities: 0, levels: 0 });
    });

    it('counts the entities that are members of no community, scoped by tenant', async () => {
      const [a, b, c] = [entity('Alpha'), entity('Beta'), entity('Gamma')];
      await saveTestDocument(store, scope, 'd1');
      await store.repositories.graphWrites.applyChunkExtraction(scope, await chunk('d1', 0), [a, b, c], [relationship(a, b)]);
      expect(await store.repositories.communities.countUnassignedEntities(scope)).toBe(3);
      const community: CommunityWrite = {
        ...{ id: 'c1', level: 0, parentId: null, title: 'c1', summary: 'c1', keyFacts: [], kind: 'extractive', contentHash: 'c1'.padEnd(64, '0') },
        ...{ memberIds: [a.entityId, b.entityId], embedding: new Float32Array(0) },
      };
      await store.repositories.communities.saveCommunities(scope, { upserts: [community], removedIds: [] }, new Date().toISOString());
      expect(await store.repositories.communities.countUnassignedEntities(scope)).toBe(1);
      expect(await store.repositories.communities.countUnassignedEntities({ tenantId: 'someone-else', kbId: scope.kbId })).toBe(0);
    });
  });
}
