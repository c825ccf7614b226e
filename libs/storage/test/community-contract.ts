import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import type { CommunityWrite } from '@trellis/graph';
import type { TrellisStore } from '../src/trellis-store';
import { TEST_KB_SETTINGS } from './store-contract';

function community(id: string, overrides: Partial<CommunityWrite> = {}): CommunityWrite {
  return {
    id,
    level: 0,
    parentId: null,
    title: `Title of ${id}`,
    summary: `Summary of ${id}, with ünïcode.`,
    keyFacts: [{ text: 'A relates to B', relationshipId: 'r1', chunkIds: ['c1', 'c2'] }],
    kind: 'extractive',
    contentHash: 'a'.repeat(64),
    memberIds: ['e2', 'e1'],
    embedding: new Float32Array([0.5, -1, 2]),
    ...overrides,
  };
}

/**
 * Communities, for every TrellisStore adapter: saved and read back whole (members, key facts,
 * embedding), replaced and removed in one save, scoped by tenant, deleted with the knowledge
 * base; and the refresh state that debounces automatic refreshes.
 */
export function describeCommunityContract(name: string, makeStore: () => Promise<TrellisStore>): void {
  describe(`${name}: communities`, () => {
    let store: TrellisStore;
    let scope: KbScope;
    let otherTenant: KbScope;

    beforeEach(async () => {
      store = await makeStore();
      const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
      scope = { tenantId: 't1', kbId: kb.id };
      const other = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't2' }, { name: 'kb', description: '', settings: TEST_KB_SETTINGS });
      otherTenant = { tenantId: 't2', kbId: other.id };
    });

    afterEach(async () => {
      await store.close();
    });

    it('saves communities and reads them back whole, by level then id; a save again changes nothing', async () => {
      const parent = community('p1', { level: 1, memberIds: ['e1', 'e2', 'e3'], kind: 'llm', embedding: new Float32Array(0) });
      const changes = { upserts: [community('c2', { parentId: 'p1', memberIds: ['e3'] }), parent, community('c1', { parentId: 'p1' })], removedIds: [] };
      await store.repositories.communities.saveCommunities(scope, changes, '2026-01-01T00:00:00.000Z');
      await store.repositories.communities.saveCommunities(scope, changes, '2026-01-01T00:00:00.000Z');
      const listed = await store.repositories.communities.listCommunities(scope);
      expect(listed.map((c) => c.id)).toEqual(['c1', 'c2', 'p1']);
      const { updatedAt, ...c1 } = listed[0]!;
      expect(c1).toEqual({ ...community('c1', { parentId: 'p1' }), memberIds: ['e1', 'e2'] });
      expect(updatedAt).toBe('2026-01-01T00:00:00.000Z');
      expect(listed[2]).toMatchObject({ level: 1, parentId: null, kind: 'llm', memberIds: ['e1', 'e2', 'e3'], embedding: new Float32Array(0) });
      expect(await store.repositories.communities.getCommunity(scope, 'p1')).toEqual(listed[2]);
      expect(await store.repositories.communities.getCommunity(scope, 'missing')).toBeNull();
    });

    it('replaces the members of an upserted community and removes removed ones with their members', async () => {
      await store.repositories.communities.saveCommunities(scope, { upserts: [community('c1'), community('c2')], removedIds: [] }, '2026-01-01T00:00:00.000Z');
      await store.repositories.communities.saveCommunities(scope, { upserts: [community('c1', { memberIds: ['e9'], title: 'New' })], removedIds: ['c2'] }, '2026-01-02T00:00:00.000Z');
      const listed = await store.repositories.communities.listCommunities(scope);
      expect(listed.map((c) => [c.id, c.title, c.memberIds])).toEqual([['c1', 'New', ['e9']]]);
      expect(await store.repositories.communities.getCommunity(scope, 'c2')).toBeNull();
    });

    it("writes an upsert's members as a difference: added ones in, gone ones out, other communities' rows untouched", async () => {
      const parent = community('p1', { level: 1, parentId: null, memberIds: ['e1', 'e2', 'e3'] });
      await store.repositories.communities.saveCommunities(scope, { upserts: [community('c1', { parentId: 'p1' }), parent], removedIds: [] }, '2026-01-01T00:00:00.000Z');
      const moved = community('c1', { parentId: 'p9', title: 'Moved', memberIds: ['e2', 'e4'] });
      await store.repositories.communities.saveCommunities(scope, { upserts: [moved], removedIds: [] }, '2026-01-02T00:00:00.000Z');
      const listed = await store.repositories.communities.listCommunities(scope);
      expect(listed.map((c) => [c.id, c.parentId, c.title, c.memberIds])).toEqual([
        ['c1', 'p9', 'Moved', ['e2', 'e4']],
        ['p1', null, parent.title, ['e1', 'e2', 'e3']],
      ]);
      expect((await store.repositories.communities.listCommunitiesOfEntities(scope, ['e1'])).map((c) => c.id)).toEqual(['p1']);
      expect((await store.repositories.communities.listCommunitiesOfEntities(scope, ['e4'])).map((c) => c.id)).toEqual(['c1']);
      // The same members again: nothing to write, nothing lost.
      await store.repositories.communities.saveCommunities(scope, { upserts: [moved], removedIds: [] }, '2026-01-03T00:00:00.000Z');
      expect((await store.repositories.communities.getCommunity(scope, 'c1'))?.memberIds).toEqual(['e2', 'e4']);
    });

    it("never shows a tenant another tenant's communities, even under the same ids; the knowledge base's deletion takes them", async () => {
      await store.repositories.communities.saveCommunities(scope, { upserts: [community('c1')], removedIds: [] }, '2026-01-01T00:00:00.000Z');
      expect(await store.repositories.communities.listCommunities(otherTenant)).toEqual([]);
      expect(await store.repositories.communities.getCommunity({ tenantId: 't2', kbId: scope.kbId }, 'c1')).toBeNull();
      await store.repositories.communities.saveCommunities(otherTenant, { upserts: [community('c1', { title: 'Theirs' })], removedIds: [] }, '2026-01-01T00:00:00.000Z');
      expect((await store.repositories.communities.getCommunity(scope, 'c1'))?.title).toBe('Title of c1');
      expect(await store.repositories.knowledgeBases.deleteKnowledgeBase(scope)).toBe(true);
      expect(await store.repositories.communities.listCommunities(scope)).toEqual([]);
      expect(await store.repositories.communities.getCommunityState(scope)).toEqual({ changedAt: null, refreshedAt: null });
      expect((await store.repositories.communities.listCommunities(otherTenant)).map((c) => c.title)).toEqual(['Theirs']);
    });

    it('makes a refresh due once built communities saw the graph change and stay quiet; a refresh from a graph read after the change settles it', async () => {
      expect(await store.repositories.communities.getCommunityState(scope)).toEqual({ changedAt: null, refreshedAt: null });
      // Never built: changes alone make nothing due (the first build is asked for).
      await store.repositories.communities.markCommunitiesChanged(scope, '2026-01-01T00:00:01.000Z');
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:30.000Z')).toEqual([]);
      await store.repositories.communities.saveCommunities(scope, { upserts: [], removedIds: [] }, '2026-01-01T00:00:02.000Z');
      await store.repositories.communities.saveCommunities(otherTenant, { upserts: [], removedIds: [] }, '2026-01-01T00:00:02.000Z');
      await store.repositories.communities.markCommunitiesChanged(scope, '2026-01-01T00:00:10.000Z');
      await store.repositories.communities.markCommunitiesChanged(otherTenant, '2026-01-01T00:00:20.000Z');
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:05.000Z')).toEqual([]);
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:15.000Z')).toEqual([scope]);
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:30.000Z')).toEqual([scope, otherTenant]);
      // Read before the change: still due.
      await store.repositories.communities.saveCommunities(scope, { upserts: [], removedIds: [] }, '2026-01-01T00:00:09.000Z');
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:30.000Z')).toEqual([scope, otherTenant]);
      await store.repositories.communities.saveCommunities(scope, { upserts: [], removedIds: [] }, '2026-01-01T00:00:11.000Z');
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:30.000Z')).toEqual([otherTenant]);
      expect(await store.repositories.communities.getCommunityState(scope)).toEqual({ changedAt: '2026-01-01T00:00:10.000Z', refreshedAt: '2026-01-01T00:00:11.000Z' });
      // A later change makes it due again.
      await store.repositories.communities.markCommunitiesChanged(scope, '2026-01-01T00:00:12.000Z');
      expect(await store.repositories.communities.listCommunityRefreshesDue('2026-01-01T00:00:30.000Z')).toEqual([scope, otherTenant]);
    });
  });
}
