import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { CommunityBuilder } from './community-builder';
import type { CommunityGraphSource, CommunityModels, CommunityStore } from './community-builder';
import type { CommunityChanges, CommunityEntity, CommunityRecord, CommunityRelationship } from './community-records';

const scope: KbScope = { tenantId: 't1', kbId: 'kb1' };

/** Four groups of five entities (cliques); groups 0-1 and 2-3 are paired by medium edges, the pairs by one weak edge. */
function graph(): { entities: CommunityEntity[]; relationships: CommunityRelationship[] } {
  const entities: CommunityEntity[] = [];
  const relationships: CommunityRelationship[] = [];
  const name = (g: number, i: number) => `g${g}e${i}`;
  const link = (a: string, b: string, weight: number) =>
    relationships.push({ id: `r:${a}:${b}`, sourceId: a, targetId: b, sourceName: a, targetName: b, label: 'relates to', description: `${a} and ${b}`, weight });
  for (let g = 0; g < 4; g++) {
    for (let i = 0; i < 5; i++) entities.push({ id: name(g, i), name: name(g, i), type: 'thing', description: `Entity ${i} of group ${g}.` });
    for (let i = 0; i < 5; i++) for (let j = i + 1; j < 5; j++) link(name(g, i), name(g, j), 3);
  }
  link(name(0, 0), name(1, 0), 1);
  link(name(0, 1), name(1, 1), 1);
  link(name(2, 0), name(3, 0), 1);
  link(name(2, 1), name(3, 1), 1);
  link(name(1, 2), name(2, 2), 0.2);
  return { entities, relationships };
}

class MemoryCommunities implements CommunityStore {
  rows = new Map<string, CommunityRecord>();
  saves: CommunityChanges[] = [];
  async listCommunities(): Promise<CommunityRecord[]> {
    return [...this.rows.values()];
  }
  async saveCommunities(_scope: KbScope, changes: CommunityChanges, refreshedAt: string): Promise<void> {
    this.saves.push(changes);
    for (const id of changes.removedIds) this.rows.delete(id);
    for (const row of changes.upserts) this.rows.set(row.id, { ...row, updatedAt: refreshedAt });
  }
}

function setup(withLlm: boolean) {
  let current = graph();
  const source: CommunityGraphSource = {
    exportGraph: async () => current,
    chunkIdsForRelationships: async (_s, ids) => new Map(ids.map((id) => [id, [`chunk-of-${id}`]])),
  };
  const store = new MemoryCommunities();
  const briefs: string[] = [];
  const models: CommunityModels = {
    embed: async (texts) => texts.map((t) => new Float32Array([t.length, 1])),
    writeReport: withLlm ? async (brief) => (briefs.push(brief), { title: `LLM title ${briefs.length}`, summary: 'LLM summary' }) : null,
  };
  return { store, briefs, builder: new CommunityBuilder(source, store, models), change: (f: typeof current) => (current = f) };
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
