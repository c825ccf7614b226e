import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { CommunityBuilder } from './community-builder';
import type { CommunityModels } from './community-builder';
import type { CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';
import { staleness } from './community-staleness';
import { MemoryKnowledgeBase, graph } from '../../test/memory-knowledge-base';
import type { Graph } from '../../test/memory-knowledge-base';

const scope: KbScope = { tenantId: 't1', kbId: 'kb1' };

function setup(withLlm: boolean, initial: Graph = graph(), recordsChanges = true) {
  const store = new MemoryKnowledgeBase(initial, recordsChanges);
  const briefs: string[] = [];
  const models: CommunityModels = {
    embed: async (texts) => texts.map((t) => new Float32Array([t.length, 1])),
    writeReport: withLlm ? async (brief) => (briefs.push(brief), { title: `LLM title ${briefs.length}`, summary: 'LLM summary' }) : null,
  };
  return { store, briefs, builder: new CommunityBuilder(store, store, models), change: (next: Graph) => store.setGraph(next) };
}

describe('CommunityBuilder', () => {
  it('detects the groups at level 0, their pairs at level 1, and links parents', async () => {
    const { store, builder } = setup(false);
    const result = await builder.refresh(scope);
    const rows = [...store.rows.values()];
    const level0 = rows.filter((c) => c.level === 0).map((c) => [...c.memberIds].sort());
    expect(level0.sort()).toEqual([0, 1, 2, 3].map((g) => [0, 1, 2, 3, 4].map((i) => `g${g}e${i}`)));
    const level1 = rows.filter((c) => c.level === 1);
    expect(level1.map((c) => c.memberIds.length).sort()).toEqual([10, 10]);
    for (const c of rows.filter((r) => r.level === 0)) expect(level1.map((p) => p.id)).toContain(c.parentId);
    expect(result).toMatchObject({ full: true, communities: rows.length, reportsWritten: rows.length, llmCalls: 0 });
  });

  it('writes extractive reports: title from central entities, key facts citing relationships and chunks', async () => {
    const { store, builder } = setup(false);
    await builder.refresh(scope);
    const group0 = [...store.rows.values()].find((c) => c.level === 0 && c.memberIds.includes('g0e0'))!;
    expect(group0.kind).toBe('extractive');
    // g0e0 and g0e1 carry the extra edges, but inside the group every member has degree 12.
    expect(group0.title).toBe('g0e0, g0e1 and g0e2 (+2 more)');
    expect(group0.summary).toContain('Entity 0 of group 0.');
    expect(group0.keyFacts).toHaveLength(5);
    expect(group0.keyFacts[0]).toEqual({ text: expect.stringContaining('relates to'), relationshipId: expect.any(String), chunkIds: [`chunk-of-${group0.keyFacts[0]!.relationshipId}`] });
    expect(group0.embedding.length).toBe(2);
  });

  it('is deterministic: a full rebuild of the same graph gives the same communities and writes nothing', async () => {
    const { store, builder } = setup(false);
    await builder.refresh(scope);
    const before = [...store.rows.keys()].sort();
    const again = await builder.refresh(scope, { full: true });
    expect([...store.rows.keys()].sort()).toEqual(before);
    expect(again).toMatchObject({ full: true, unchanged: before.length, reportsWritten: 0, removed: 0 });
  });

  it('after one entity changes, re-detects and re-summarises only its community and ancestors', async () => {
    const { store, briefs, builder, change } = setup(true);
    const full = await builder.refresh(scope);
    expect(full.llmCalls).toBe(briefs.length);
    const before = new Map(store.rows);
    const changed = graph();
    changed.entities[0] = { ...changed.entities[0]!, description: 'Entity 0 of group 0, re-indexed with new text.' };
    change(changed);
    const calls = briefs.length;
    const result = await builder.refresh(scope);
    // Group 0 (level 0) and its pair (level 1), plus the top if there is one.
    const affected = [...store.rows.values()].filter((c) => c.memberIds.includes('g0e0'));
    expect(result.llmCalls).toBe(briefs.length - calls);
    expect(result.llmCalls).toBe(new Set(affected.map((c) => c.contentHash)).size);
    expect(result.redetected[0]).toBe(5);
    for (const [id, row] of store.rows) {
      if (row.memberIds.includes('g0e0')) expect(row.contentHash).not.toBe(before.get(id)?.contentHash);
      else expect(row).toEqual(before.get(id));
    }
  });

  it("writes a higher community's report from its children's reports, not from its members", async () => {
    const { store, briefs, builder } = setup(true);
    await builder.refresh(scope);
    const rows = [...store.rows.values()];
    const pair = rows.find((c) => c.level === 1)!;
    const children = rows.filter((c) => c.parentId === pair.id);
    // Level 0 first, each from its entities; then the pair, from its two children's LLM reports.
    const pairBrief = briefs.find((b) => b.startsWith('Groups (2, largest first)') && children.every((c) => b.includes(`- ${c.title} (5 entities): LLM summary`)));
    expect(pairBrief).toBeDefined();
    expect(pairBrief).not.toContain('Entity 0 of group');
    expect(briefs.filter((b) => b.startsWith('Entities (')).length).toBe(4);
    // Its key facts are its children's most central ones, with their chunks.
    expect(pair.keyFacts.map((f) => f.relationshipId)).toEqual([children[0]!.keyFacts[0], children[1]!.keyFacts[0], children[0]!.keyFacts[1], children[1]!.keyFacts[1], children[0]!.keyFacts[2]].map((f) => f!.relationshipId));
  });

  it('without an LLM, a higher community is titled by its largest children and summarised by their lead sentences', async () => {
    const { store, builder } = setup(false);
    await builder.refresh(scope);
    const rows = [...store.rows.values()];
    const pair = rows.find((c) => c.level === 1 && c.memberIds.includes('g0e0'))!;
    const children = rows.filter((c) => c.parentId === pair.id).sort((a, b) => a.title.localeCompare(b.title));
    expect(pair.title).toBe(`${children[0]!.title}; ${children[1]!.title}`);
    expect(pair.summary).toContain('Entity 0 of group 0.');
    expect(pair.summary).toContain('Entity 0 of group 1.');
  });

  it('marks a changed community and its ancestors stale, and nothing else; a refresh settles them', async () => {
    const { store, builder, change } = setup(false);
    await builder.refresh(scope);
    const changed = graph();
    changed.entities[0] = { ...changed.entities[0]!, description: 'Entity 0 of group 0, re-indexed.' };
    change(changed);
    const { staleIds } = staleness([...store.rows.values()], changed.entities, changed.relationships);
    expect([...staleIds].sort()).toEqual([...store.rows.values()].filter((c) => c.memberIds.includes('g0e0')).map((c) => c.id).sort());
    await builder.refresh(scope);
    expect(staleness([...store.rows.values()], changed.entities, changed.relationships).staleIds.size).toBe(0);
  });

  it('a new entity attached to a group makes that group stale and joins it', async () => {
    const { store, builder, change } = setup(false);
    await builder.refresh(scope);
    const next = graph();
    next.entities.push({ id: 'new', name: 'new', type: 'thing', description: 'A newcomer.' });
    for (const i of [0, 1, 2]) next.relationships.push({ id: `r:new:${i}`, sourceId: 'new', targetId: `g3e${i}`, sourceName: 'new', targetName: `g3e${i}`, label: 'joins', description: '', weight: 3 });
    change(next);
    const result = await builder.refresh(scope);
    expect([...store.rows.values()].find((c) => c.level === 0 && c.memberIds.includes('new'))!.memberIds).toContain('g3e0');
    expect(result.redetected[0]).toBe(6);
  });

  it('removes the communities whose entities vanished (a document deleted)', async () => {
    const { store, builder, change } = setup(false);
    await builder.refresh(scope);
    const next = graph();
    // Group 3 loses every entity but two: its old community disappears.
    next.entities = next.entities.filter((e) => !/^g3e[234]$/.test(e.id));
    next.relationships = next.relationships.filter((r) => !/g3e[234]/.test(r.id));
    change(next);
    const result = await builder.refresh(scope);
    expect(result.removed).toBeGreaterThan(0);
    expect([...store.rows.values()].some((c) => c.memberIds.includes('g3e4'))).toBe(false);
  });
});

/** The same four groups twice, unconnected: a change to one copy has nothing to do with the other. */
function twoGraphs(): Graph {
  const copy = graph();
  const h = (id: string) => id.replace(/^g/, 'h').replace(/:g/g, ':h');
  return {
    entities: [...graph().entities, ...copy.entities.map((e) => ({ ...e, id: h(e.id), name: h(e.name) }))],
    relationships: [...graph().relationships, ...copy.relationships.map((r) => ({ ...r, id: h(r.id), sourceId: h(r.sourceId), targetId: h(r.targetId), sourceName: h(r.sourceName), targetName: h(r.targetName) }))],
  };
}

/** Every level a partition of (some of) the graph's entities, parents the union of their children. */
function expectValidHierarchy(rows: readonly CommunityRecord[], entities: readonly CommunityEntity[]): void {
  const existing = new Set(entities.map((e) => e.id));
  const byId = new Map(rows.map((c) => [c.id, c]));
  for (const level of new Set(rows.map((c) => c.level))) {
    const members = rows.filter((c) => c.level === level).flatMap((c) => c.memberIds);
    expect(new Set(members).size, `an entity in two communities of level ${level}`).toBe(members.length);
    for (const id of members) expect(existing.has(id), `${id} is gone but still a member`).toBe(true);
  }
  for (const c of rows) {
    expect(c.memberIds.length).toBeGreaterThanOrEqual(2);
    if (c.parentId !== null) {
      const parent = byId.get(c.parentId);
      expect(parent?.level).toBe(c.level + 1);
      for (const id of c.memberIds) expect(parent!.memberIds).toContain(id);
    }
    const children = rows.filter((r) => r.parentId === c.id);
    if (c.level > 0) expect([...c.memberIds].sort()).toEqual(children.flatMap((r) => r.memberIds).sort());
  }
  // Level 0 holds every entity any level holds.
  const level0 = new Set(rows.filter((c) => c.level === 0).flatMap((c) => c.memberIds));
  for (const c of rows) for (const id of c.memberIds) expect(level0.has(id)).toBe(true);
}

describe('CommunityBuilder: a refresh costs what changed, not the graph', () => {
  it('reads only the branch that holds the changed entity and writes only communities holding it', async () => {
    const { store, builder, change } = setup(true, twoGraphs());
    const full = await builder.refresh(scope);
    expect(full).toMatchObject({ full: true, read: 'graph', entitiesRead: 40 });
    const before = new Map(store.rows);
    const touchedBefore = [...before.values()].filter((c) => c.memberIds.includes('h0e0')).map((c) => c.id);
    store.reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };

    const next = twoGraphs();
    next.entities = next.entities.map((e) => (e.id === 'h0e0' ? { ...e, description: 'Re-indexed with new text.' } : e));
    change(next);
    const result = await builder.refresh(scope);

    expect(result).toMatchObject({ full: false, read: 'region', communities: store.rows.size });
    expect(store.reads.wholeGraph).toBe(0);
    // The h copy's branch at most (20 entities): never the g copy.
    expect(store.reads.entities).toBeLessThanOrEqual(20);
    expect(result.entitiesRead).toBe(store.reads.entities);
    const save = store.saves.at(-1)!;
    expect(save.upserts.length).toBeGreaterThan(0);
    for (const c of save.upserts) expect(c.memberIds).toContain('h0e0');
    for (const id of save.removedIds) expect(touchedBefore).toContain(id);
    expect(result.llmCalls).toBe(new Set(save.upserts.map((c) => c.contentHash)).size);
    for (const [id, row] of before) if (!row.memberIds.includes('h0e0')) expect(store.rows.get(id)).toEqual(row);
    // The records it started from are consumed; the next refresh has nothing to read.
    expect(store.marks.size).toBe(0);
    store.reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
    expect(await builder.refresh(scope)).toMatchObject({ read: 'region', entitiesRead: 0, reportsWritten: 0, llmCalls: 0 });
    expect(store.reads.communities).toBe(0);
    expectValidHierarchy([...store.rows.values()], next.entities);
  });

  it('after a document is deleted, the partition stays valid, its entities are gone, the other copy untouched', async () => {
    const { store, builder, change } = setup(false, twoGraphs());
    await builder.refresh(scope);
    const before = new Map(store.rows);
    const next = twoGraphs();
    // The document that alone stated h3e2..h3e4 and h0e4 is deleted.
    const gone = /^(h3e[234]|h0e4)$/;
    next.entities = next.entities.filter((e) => !gone.test(e.id));
    next.relationships = next.relationships.filter((r) => !gone.test(r.sourceId) && !gone.test(r.targetId));
    change(next);
    const result = await builder.refresh(scope);
    expect(result.read).toBe('region');
    expect(result.removed).toBeGreaterThan(0);
    const rows = [...store.rows.values()];
    expectValidHierarchy(rows, next.entities);
    for (const c of rows) for (const id of c.memberIds) expect(gone.test(id)).toBe(false);
    for (const [id, row] of before) if (row.memberIds.some((m) => m.startsWith('g'))) expect(store.rows.get(id)).toEqual(row);
    // The same communities as the refresh over the whole graph this one replaces.
    const wide = setup(false, twoGraphs(), false);
    await wide.builder.refresh(scope);
    wide.change(next);
    expect(await wide.builder.refresh(scope)).toMatchObject({ read: 'graph', full: false });
    const rowsOf = (m: MemoryKnowledgeBase) => [...m.rows.values()].map(({ updatedAt: _at, ...row }) => row).sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(rowsOf(store)).toEqual(rowsOf(wide.store));
  });

  it('a new relationship between two entities in no community makes them one, reading only those two', async () => {
    const base = twoGraphs();
    // A loner, related to nothing: in no community.
    base.entities.push({ id: 'loner', name: 'loner', type: 'thing', description: 'Alone.' });
    const { store, builder, change } = setup(false, base);
    await builder.refresh(scope);
    expect([...store.rows.values()].some((c) => c.memberIds.includes('loner'))).toBe(false);
    const next = structuredClone(base);
    next.entities.push({ id: 'friend', name: 'friend', type: 'thing', description: 'Knows the loner.' });
    next.relationships.push({ id: 'r:friend:loner', sourceId: 'friend', targetId: 'loner', sourceName: 'friend', targetName: 'loner', label: 'knows', description: '', weight: 2 });
    change(next);
    const result = await builder.refresh(scope);
    expect(result.read).toBe('region');
    expect(result.entitiesRead).toBe(2);
    expect([...store.rows.values()].find((c) => c.memberIds.includes('loner'))!.memberIds).toEqual(['friend', 'loner']);
    expectValidHierarchy([...store.rows.values()], next.entities);
  });

  it('a full rebuild reads the whole graph, whatever was recorded', async () => {
    const { store, builder } = setup(false, twoGraphs());
    await builder.refresh(scope);
    store.reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
    expect(await builder.refresh(scope, { full: true })).toMatchObject({ full: true, read: 'graph', entitiesRead: 40 });
    expect(store.reads.wholeGraph).toBe(1);
  });
});

/** Eight groups of five (cliques) in a chain, neighbours joined by two edges: one branch of several levels. */
function chainGraph(): Graph {
  const entities: CommunityEntity[] = [];
  const relationships: CommunityRelationship[] = [];
  const link = (a: string, b: string, weight: number) =>
    relationships.push({ id: `r:${a}:${b}`, sourceId: a, targetId: b, sourceName: a, targetName: b, label: 'relates to', description: `${a} and ${b}`, weight });
  for (let g = 0; g < 8; g++) {
    for (let i = 0; i < 5; i++) entities.push({ id: `c${g}e${i}`, name: `c${g}e${i}`, type: 'thing', description: `Entity ${i} of chain group ${g}.` });
    for (let i = 0; i < 5; i++) for (let j = i + 1; j < 5; j++) link(`c${g}e${i}`, `c${g}e${j}`, 3);
    if (g > 0) for (const i of [0, 1]) link(`c${g - 1}e${i + 2}`, `c${g}e${i}`, 1);
  }
  return { entities, relationships };
}

describe('CommunityBuilder: a change inside a large branch', () => {
  it('once an LLM is configured, rewrites only the path of a change with it; the siblings, never read, keep their reports', async () => {
    const { store, builder, change } = setup(false, chainGraph());
    await builder.refresh(scope);
    const before = new Map(store.rows);
    const llm = new CommunityBuilder(store, store, { embed: async (texts) => texts.map((t) => new Float32Array([t.length, 1])), writeReport: async () => ({ title: 'LLM title', summary: 'LLM summary' }) });
    const next = chainGraph();
    next.entities = next.entities.map((e) => (e.id === 'c3e4' ? { ...e, description: 'Re-indexed.' } : e));
    change(next);
    await llm.refresh(scope);
    for (const row of store.rows.values()) {
      if (row.memberIds.includes('c3e4')) expect(row.kind).toBe('llm');
      else expect(row).toEqual(before.get(row.id));
    }
  });

  it('re-detects only the touched level-0 community and keeps every other community where it was', async () => {
    const { store, builder, change } = setup(true, chainGraph());
    await builder.refresh(scope);
    const before = new Map(store.rows);
    const top = [...before.values()].filter((c) => c.parentId === null).sort((a, b) => b.memberIds.length - a.memberIds.length)[0]!;
    // The branch is large: several levels, and many level-0 communities under its top.
    expect(top.level).toBeGreaterThanOrEqual(1);
    const leaves = [...before.values()].filter((c) => c.level === 0 && c.memberIds.every((id) => top.memberIds.includes(id)));
    expect(leaves.length).toBeGreaterThanOrEqual(4);
    const touched = leaves.find((c) => c.memberIds.includes('c3e4'))!;

    // A re-indexed document relates c3e4 to a new entity: the community of c3e4 gains a member
    // (a new id), and so do its parent and the top, which keep their ids.
    const next = chainGraph();
    next.entities.push({ id: 'c3new', name: 'c3new', type: 'thing', description: 'A newcomer.' });
    for (const other of ['c3e4', 'c3e3']) next.relationships.push({ id: `r:c3new:${other}`, sourceId: 'c3new', targetId: other, sourceName: 'c3new', targetName: other, label: 'joins', description: '', weight: 3 });
    change(next);
    store.reads = { wholeGraph: 0, entities: 0, relationships: 0, communities: 0 };
    const result = await builder.refresh(scope);

    expect(store.rows.has(touched.id)).toBe(false);
    // Its members and the newcomer were re-detected (on their own they may split); nothing else was.
    const redone = [...store.rows.values()].filter((c) => c.level === 0 && !before.has(c.id));
    expect(redone.flatMap((c) => c.memberIds).sort()).toEqual([...touched.memberIds, 'c3new'].sort());
    // Detection ran on the touched community's members (and the newcomer) alone, at every level.
    expect(result.redetected[0]).toBe(touched.memberIds.length + 1);
    expect(result.redetected.slice(1).every((n) => n === 0)).toBe(true);
    // Only those entities were read: the ancestors' content comes from their children's reports.
    expect(store.reads.entities).toBe(touched.memberIds.length + 1);
    const rows = [...store.rows.values()];
    expectValidHierarchy(rows, next.entities);
    // Every community not holding a changed entity is kept exactly as it was, parent link included.
    for (const [id, row] of before) if (!row.memberIds.includes('c3e4')) expect(store.rows.get(id)).toEqual(row);
    // Only the path was written: one community per level, each holding the changed entity;
    // above level 0 each keeps its id.
    const save = store.saves.at(-1)!;
    const changedIds = new Set([...touched.memberIds, 'c3new']);
    const holding = save.upserts.filter((c) => c.memberIds.some((id) => changedIds.has(id)));
    expect(holding).toEqual(save.upserts);
    for (let level = 1; level <= top.level; level++) {
      const atLevel = holding.filter((c) => c.level === level);
      expect(atLevel).toHaveLength(1);
      expect(before.has(atLevel[0]!.id)).toBe(true);
    }
    // An ancestor's report comes from its children's: the top's key facts are theirs.
    const newTop = store.rows.get(top.id)!;
    const childFacts = new Set(rows.filter((c) => c.parentId === top.id).flatMap((c) => c.keyFacts.map((f) => f.relationshipId)));
    for (const fact of newTop.keyFacts) expect(childFacts.has(fact.relationshipId)).toBe(true);
    // A report (an LLM call) for each community whose content changed.
    expect(result.reportsWritten).toBe(holding.length);
    expect(result.llmCalls).toBe(new Set(holding.map((c) => c.contentHash)).size);
  });
});
