import { testStores } from './test-stores';
import { SETTINGS, TOPICS, embedder, graphIndexer, topic } from './community-fixtures';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stableId } from '@trellis/contracts';
import type { KbScope } from '@trellis/contracts';
import { CommunityBuilder } from '@trellis/graph';
import { LlmCommunityReporter, OpenAiChatModel, createOpenAiClient } from '@trellis/models';
import type { ExtractionResult, TrellisStore } from '@trellis/storage';
import { FakeOpenAiServer } from '@trellis/testing';
import { CommunityService } from '../src/community.service';
import { CommunityRefreshLoop } from '../src/community-refresh.loop';
import { GraphEditService } from '../src/graph-edit.service';

/**
 * Communities over the real graph pipeline: documents written by the graph writer into a real
 * store (SQLite; the MySQL adapter too when TRELLIS_TEST_MYSQL_URL is set), reports written by
 * the LLM reporter over HTTP against the fake OpenAI server, refreshes run by the refresh loop.
 */

const CORPUS: Record<string, ExtractionResult> = { databases: TOPICS.databases, planets: TOPICS.planets, composers: TOPICS.composers };

const { stores, dropDatabases } = testStores();

describe.each(stores)('communities over the graph pipeline on %s', (_name, makeStore) => {
  const fake = new FakeOpenAiServer(64);
  let store: TrellisStore;
  let baseUrl: string;

  beforeAll(async () => {
    baseUrl = await fake.start();
    fake.respondWith((request) => {
      const brief = String((request.messages as Array<{ content: string }>)[1]!.content);
      const first = /^- ([^(]+) \(/m.exec(brief)?.[1]?.trim() ?? 'nothing';
      return { kind: 'content', content: JSON.stringify({ title: `Around ${first}`, summary: `A community around ${first}.` }) };
    });
    store = await makeStore();
  });

  afterAll(async () => {
    await store.close();
    await fake.stop();
    await dropDatabases();
  });

  it('builds communities with LLM reports, marks only what a re-indexed document touched stale, and refreshes only that', async () => {
    const kb = await store.repositories.knowledgeBases.createKnowledgeBase({ tenantId: 't' }, { name: 'topics', description: '', settings: SETTINGS });
    const scope: KbScope = { tenantId: 't', kbId: kb.id };
    const repos = store.repositories;
    const index = graphIndexer(store, scope);
    for (const [id, extraction] of Object.entries(CORPUS)) await index(id, extraction);

    const llm = new OpenAiChatModel(createOpenAiClient({ baseUrl, apiKey: 'test', timeoutMs: 10_000, maxRetries: 0 }), 'fake-model');
    const reporter = new LlmCommunityReporter(llm);
    const builder = new CommunityBuilder(store.repositories.graphReads, store.repositories.communities, { embed: (texts) => embedder.embed(texts), writeReport: (brief, onUsage) => reporter.write(brief, onUsage) });
    const service = new CommunityService(repos, builder);
    const tenant = { tenantId: 't' };
    let now = Date.now();
    const loop = new CommunityRefreshLoop(store.repositories.communities, (s) => service.refreshDue(s), (error) => { throw error; }, { quietMs: 1_000, pollMs: 60_000 }, () => now);

    // Never built: indexing alone builds nothing (the first build is asked for).
    now += 10_000;
    expect(await loop.runDue()).toBe(0);
    const full = await service.rebuild(tenant, 'topics', false);
    expect(full).toMatchObject({ full: true, communities: 3, levels: 1, llmCalls: 3, reportsWritten: 3 });
    expect(fake.chatRequests()).toHaveLength(3);
    // Report calls count towards the knowledge base's LLM usage, as extraction's do.
    expect(await store.repositories.llmUsage.getKnowledgeBaseLlmUsage(scope)).toMatchObject({ calls: 3, inputTokens: expect.any(Number) });
    expect((await store.repositories.llmUsage.getKnowledgeBaseLlmUsage(scope)).inputTokens).toBeGreaterThan(0);

    const built = await service.list(tenant, 'topics');
    expect(built.communities.map((c) => [c.level, c.size, c.kind, c.stale])).toEqual([[0, 5, 'llm', false], [0, 5, 'llm', false], [0, 5, 'llm', false]]);
    const planets = built.communities.find((c) => c.title === 'Around Earth' || c.title.includes('Mercury') || c.title.includes('Sun'))!;
    const detail = await service.get(tenant, 'topics', planets.id);
    expect(detail.members.map((m) => m.name).sort()).toEqual(['Earth', 'Mars', 'Mercury', 'Sun', 'Venus']);
    expect(detail.community.keyFacts[0]!.chunkIds).toEqual([stableId('chk', scope.kbId, 'planets', 1, 0)]);
    await expect(service.get(tenant, 'topics', 'community_nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(service.get({ tenantId: 'other' }, 'topics', planets.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    // Version 2 of the planets document adds Jupiter; the other two topics are untouched.
    await index('planets', topic(['Mercury', 'Venus', 'Earth', 'Mars', 'Sun', 'Jupiter'], 'the solar system'), 2);
    const changed = await service.list(tenant, 'topics');
    expect(changed.communities.filter((c) => c.stale).map((c) => c.id)).toEqual([planets.id]);
    expect(changed.unassignedEntities).toBe(1);

    // Not quiet yet: no refresh. Quiet: exactly the changed community is recomputed.
    now = Date.now();
    expect(await loop.runDue()).toBe(0);
    now += 10_000;
    expect(await loop.runDue()).toBe(1);
    expect(fake.chatRequests()).toHaveLength(4);
    const after = await service.list(tenant, 'topics');
    expect(after.communities.map((c) => c.stale)).toEqual([false, false, false]);
    expect(after.unassignedEntities).toBe(0);
    for (const c of built.communities.filter((b) => b.id !== planets.id)) expect(after.communities).toContainEqual(c);
    expect(after.communities.find((c) => c.size === 6)?.id).not.toBe(planets.id);
    expect(await loop.runDue()).toBe(0);

    // A graph edit (a weight set to keep a relationship out) makes a refresh due again.
    const edits = new GraphEditService(repos, embedder);
    const relationship = (await store.repositories.graphReads.exportGraph(scope)).relationships.find((r) => r.sourceName === 'Bach')!;
    await edits.updateRelationship({ tenant, knowledgeBase: 'topics', actor: 'test' }, relationship.id, { weight: -1 });
    expect((await service.list(tenant, 'topics')).communities.filter((c) => c.stale)).toHaveLength(1);
    now += 10_000;
    expect(await loop.runDue()).toBe(1);
    expect(fake.chatRequests()).toHaveLength(5);

    // One refresh of a knowledge base at a time, across processes: a held lease defers the loop's and refuses a rebuild.
    const key = `community-refresh:${scope.tenantId}:${scope.kbId}`;
    expect(await store.repositories.llmBudget.acquireLease(key, 'another process', 1, Date.now() + 60_000, Date.now())).toBe(true);
    await store.repositories.communities.markCommunitiesChanged(scope, new Date().toISOString());
    now = Date.now() + 10_000;
    expect(await loop.runDue()).toBe(0);
    await expect(service.rebuild(tenant, 'topics', false)).rejects.toMatchObject({ code: 'FAILED_PRECONDITION' });
    await store.repositories.llmBudget.releaseLease(key, 'another process');
    expect(await loop.runDue()).toBe(1);
  });
});
