import { testStores } from './test-stores';
import { SETTINGS, TOPICS, embedder, graphIndexer, topic } from './community-fixtures';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { CommunityBuilder, staleness } from '@trellis/graph';
import type { CommunityChangeLog, CommunityChanges, CommunityEntity, CommunityGraphSource, CommunityRecord, CommunityRelationship, CommunityStore } from '@trellis/graph';
import type { ExtractionResult, TrellisStore } from '@trellis/storage';
import { CommunityService } from '../src/community.service';
import { GraphEditService } from '../src/graph-edit.service';

/**
 * An incremental community refresh costs what changed: over the real graph pipeline and a real
 * store (SQLite; the MySQL adapter too when TRELLIS_TEST_MYSQL_URL is set), a refresh after one
 * document or one edit reads only the communities holding what changed, writes only those, and
 * leaves a valid hierarchy.
 */

const CORPUS: Record<string, ExtractionResult> = TOPICS;

/**
 * The real store behind the builder's two ports, counting what a refresh reads and keeping
 * what it saves: a typed decorator of the store under test, not a mock of its SQL.
 */
class CountingStore implements CommunityGraphSource, CommunityStore {
  reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
  /** Ids of the communities read, however often. */
  communitiesRead = new Set<string>();
  saves: CommunityChanges[] = [];

  constructor(private readonly store: TrellisStore) {}

  reset(): void {
    this.reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
    this.communitiesRead.clear();
    this.saves = [];
  }
  async exportGraph(scope: KbScope): Promise<{ entities: CommunityEntity[]; relationships: CommunityRelationship[] }> {
    const graph = await this.store.repositories.graphReads.exportGraph(scope);
    this.reads.wholeGraph++;
    this.reads.entities += graph.entities.length;
    this.reads.relationships += graph.relationships.length;
    return graph;
  }
  async getEntities(scope: KbScope, ids: readonly string[]): Promise<CommunityEntity[]> {
    const found = await this.store.repositories.graphReads.getEntities(scope, ids);
    this.reads.entities += found.length;
    return found;
  }
  async relationshipsOfEntities(scope: KbScope, ids: readonly string[]): Promise<CommunityRelationship[]> {
    const found = await this.store.repositories.graphReads.relationshipsOfEntities(scope, ids);
    this.reads.relationships += found.length;
    return found;
  }
  chunkIdsForRelationships(scope: KbScope, ids: readonly string[]): Promise<Map<string, string[]>> {
    return this.store.repositories.graphReads.chunkIdsForRelationships(scope, ids);
  }
  async listCommunities(scope: KbScope): Promise<CommunityRecord[]> {
    return this.counted(await this.store.repositories.communities.listCommunities(scope));
  }
  async listCommunitiesOfEntities(scope: KbScope, ids: readonly string[]): Promise<CommunityRecord[]> {
    return this.counted(await this.store.repositories.communities.listCommunitiesOfEntities(scope, ids));
  }
  private counted(communities: CommunityRecord[]): CommunityRecord[] {
    for (const c of communities) this.communitiesRead.add(c.id);
    this.reads.communities = this.communitiesRead.size;
    return communities;
  }
  listAssignedEntities(scope: KbScope, ids: readonly string[]): Promise<string[]> {
    return this.store.repositories.communities.listAssignedEntities(scope, ids);
  }
  listCommunityChanges(scope: KbScope): Promise<CommunityChangeLog> {
    return this.store.repositories.communities.listCommunityChanges(scope);
  }
  countCommunities(scope: KbScope): Promise<{ communities: number; levels: number }> {
    return this.store.repositories.communities.countCommunities(scope);
  }
  async saveCommunities(scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void> {
    this.saves.push(changes);
    await this.store.repositories.communities.saveCommunities(scope, changes, refreshedAt);
  }
}

/** Each level a partition of live entities (none in two), parents exactly the union of their children. */
async function expectValidHierarchy(store: TrellisStore, scope: KbScope): Promise<void> {
  const rows = await store.repositories.communities.listCommunities(scope);
  const live = new Set((await store.repositories.graphReads.exportGraph(scope)).entities.map((e) => e.id));
  for (const level of new Set(rows.map((c) => c.level))) {
    const members = rows.filter((c) => c.level === level).flatMap((c) => c.memberIds);
    expect(new Set(members).size).toBe(members.length);
    for (const id of members) expect(live.has(id), `deleted entity ${id} is still a member`).toBe(true);
  }
  for (const c of rows.filter((r) => r.level > 0)) {
    const children = rows.filter((r) => r.parentId === c.id);
    expect(children.every((r) => r.level === c.level - 1)).toBe(true);
    expect([...c.memberIds].sort()).toEqual(children.flatMap((r) => r.memberIds).sort());
  }
  for (const c of rows.filter((r) => r.parentId !== null)) expect(rows.some((p) => p.id === c.parentId)).toBe(true);
}

const { stores, dropDatabases } = testStores();
afterAll(dropDatabases);

describe.each(stores)('incremental community refresh on %s', (_name, makeStore) => {
  let store: TrellisStore;
  let scope: KbScope;
  let counting: CountingStore;
  let service: CommunityService;
  let index: ReturnType<typeof graphIndexer>;
  const tenant = { tenantId: 't' };
  const entityId = (name: string) => stableId('ent', 't', scope.kbId, name.toLowerCase());

  beforeEach(async () => {
    store = await makeStore();
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase(tenant, { name: 'topics', description: '', settings: SETTINGS });
    scope = { tenantId: 't', kbId: kb.id };
    const repos = store.repositories;
    index = graphIndexer(store, scope);
    for (const [id, extraction] of Object.entries(CORPUS)) await index(id, extraction);
    counting = new CountingStore(store);
    service = new CommunityService(repos, new CommunityBuilder(counting, counting, { embed: (texts) => embedder.embed(texts), writeReport: null }));
    expect(await service.rebuild(tenant, 'topics', false)).toMatchObject({ full: true, read: 'graph', communities: 4 });
    counting.reset();
  });

  it("a re-indexed document: the refresh reads and writes only the communities of that document's entities", async () => {
    const before = await store.repositories.communities.listCommunities(scope);
    const planets = before.find((c) => c.memberIds.includes(entityId('Earth')))!;
    await index('planets', topic(['Mercury', 'Venus', 'Earth', 'Mars', 'Sun', 'Jupiter'], 'the solar system'), 2);

    const result = await service.rebuild(tenant, 'topics', true);
    expect(result).toMatchObject({ full: false, read: 'region', communities: 4, removed: 1, reportsWritten: 1 });
    // The six planets' entities, their relationships and their one community: nothing else.
    expect(counting.reads).toEqual({ wholeGraph: 0, entities: 6, relationships: 15, communities: 1 });
    const [save] = counting.saves;
    expect(save!.upserts.map((c) => [...c.memberIds].sort())).toEqual([['Earth', 'Jupiter', 'Mars', 'Mercury', 'Sun', 'Venus'].map(entityId).sort()]);
    expect(save!.removedIds).toEqual([planets.id]);
    const after = await store.repositories.communities.listCommunities(scope);
    for (const c of before.filter((b) => b.id !== planets.id)) expect(after).toContainEqual(c);
    await expectValidHierarchy(store, scope);
    // Nothing changed since: the next refresh reads nothing at all.
    counting.reset();
    expect(await service.rebuild(tenant, 'topics', true)).toMatchObject({ read: 'region', entitiesRead: 0, reportsWritten: 0 });
    expect(counting.reads).toEqual({ wholeGraph: 0, entities: 0, relationships: 0, communities: 0 });
  });

  it('lists and shows communities from the change records, never reading the whole graph, and agrees with the graph', async () => {
    const repos = store.repositories;
    let wholeGraphReads = 0;
    const graphReads = new Proxy(repos.graphReads, {
      get(target, key, receiver) {
        if (key === 'exportGraph') wholeGraphReads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const viewer = new CommunityService({ ...repos, graphReads }, new CommunityBuilder(counting, counting, { embed: (texts) => embedder.embed(texts), writeReport: null }));
    await index('planets', topic(['Mercury', 'Venus', 'Earth', 'Mars', 'Sun', 'Jupiter'], 'the solar system'), 2);
    const listed = await viewer.list(tenant, 'topics');
    const planets = listed.communities.find((c) => c.title.includes('Earth') || c.stale)!;
    const shown = await viewer.get(tenant, 'topics', planets.id);
    expect(wholeGraphReads).toBe(0);
    // The same answer as the staleness computed against the whole graph.
    const graph = await store.repositories.graphReads.exportGraph(scope);
    const expected = staleness(await store.repositories.communities.listCommunities(scope), graph.entities, graph.relationships);
    expect(listed.communities.filter((c) => c.stale).map((c) => c.id).sort()).toEqual([...expected.staleIds].sort());
    expect(listed.communities.some((c) => c.stale)).toBe(true);
    expect(listed.unassignedEntities).toBe(expected.unassigned);
    expect(shown.community.stale).toBe(expected.staleIds.has(planets.id));
    expect(shown.members.map((m) => m.id).sort()).toEqual((await store.repositories.communities.getCommunity(scope, planets.id))!.memberIds.filter((id) => graph.entities.some((e) => e.id === id)).sort());
  });

  it('a deleted document: its community goes, the partition stays valid, the others are not read', async () => {
    const before = await store.repositories.communities.listCommunities(scope);
    // A second document shares Bach with the composers: deleting composers leaves Bach to it.
    await index('organ', topic(['Bach', 'Organ'], 'the organ'));
    await service.rebuild(tenant, 'topics', true);
    const built = await store.repositories.communities.listCommunities(scope);
    const top = built.find((c) => c.parentId === null && c.memberIds.includes(entityId('Bach')))!;
    const composers = built.filter((c) => c.memberIds.every((id) => top.memberIds.includes(id))).map((c) => c.id);
    counting.reset();
    await store.repositories.documents.deleteDocument(scope, 'composers');

    const result = await service.rebuild(tenant, 'topics', true);
    expect(result.read).toBe('region');
    expect(counting.reads.wholeGraph).toBe(0);
    // The branch of the composers (with the organ, wherever it landed), and nothing else.
    expect([...counting.communitiesRead].sort()).toEqual(composers.sort());
    const after = await store.repositories.communities.listCommunities(scope);
    const names = new Map((await store.repositories.graphReads.exportGraph(scope)).entities.map((e) => [e.id, e.name]));
    expect(after.map((c) => c.memberIds.map((id) => names.get(id)).sort())).toContainEqual(['Bach', 'Organ']);
    for (const gone of ['Leipzig', 'Handel', 'Telemann', 'Baroque music']) expect(after.some((c) => c.memberIds.includes(entityId(gone)))).toBe(false);
    for (const c of before.filter((b) => !b.memberIds.includes(entityId('Bach')))) expect(after).toContainEqual(c);
    await expectValidHierarchy(store, scope);
  });

  it('graph edits (a weight, a deletion, a merge) mark exactly the affected communities stale, and the refresh recomputes just those', async () => {
    const edits = new GraphEditService(store.repositories, embedder);
    const ctx = { tenant, knowledgeBase: 'topics', actor: 'test' };
    const staleThenRefresh = async (edit: () => Promise<unknown>) => {
      const before = await store.repositories.communities.listCommunities(scope);
      await edit();
      const stale = (await service.list(tenant, 'topics')).communities.filter((c) => c.stale).map((c) => c.id);
      expect(stale.length).toBeGreaterThan(0);
      counting.reset();
      expect(await service.rebuild(tenant, 'topics', true)).toMatchObject({ read: 'region' });
      expect(counting.reads.wholeGraph).toBe(0);
      const after = await store.repositories.communities.listCommunities(scope);
      // Every stale community was recomputed (its row replaced or gone); every other one kept as it was.
      for (const c of before) {
        if (stale.includes(c.id)) expect(after).not.toContainEqual(c);
        else expect(after).toContainEqual(c);
      }
      expect((await service.list(tenant, 'topics')).communities.filter((c) => c.stale)).toEqual([]);
      await expectValidHierarchy(store, scope);
      return stale;
    };

    const bach = (await store.repositories.graphReads.exportGraph(scope)).relationships.find((r) => r.sourceName === 'Bach' && r.targetName === 'Leipzig')!;
    expect(await staleThenRefresh(() => edits.updateRelationship(ctx, bach.id, { weight: 0.5 }))).toHaveLength(1);
    expect(await staleThenRefresh(() => edits.deleteEntity(ctx, entityId('Elbe')))).toHaveLength(1);
    expect(await staleThenRefresh(() => edits.mergeEntities(ctx, entityId('Venus'), entityId('Earth')))).toHaveLength(1);
    const rows = await store.repositories.communities.listCommunities(scope);
    expect(rows.some((c) => c.memberIds.includes(entityId('Venus')) || c.memberIds.includes(entityId('Elbe')))).toBe(false);
    expect(rows.find((c) => c.memberIds.includes(entityId('Earth')))!.memberIds).toHaveLength(4);
  });
});
