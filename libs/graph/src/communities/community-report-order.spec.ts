import { describe, expect, it } from 'vitest';
import type { KbScope } from '@trellis/contracts';
import { CommunityBuilder } from './community-builder';
import type { CommunityModels } from './community-builder';
import { MemoryKnowledgeBase, graph } from '../../test/memory-knowledge-base';
import type { Graph } from '../../test/memory-knowledge-base';

const scope: KbScope = { tenantId: 't1', kbId: 'kb1' };

/** The first names a brief lists (entities at level 0, child reports above). */
function namesIn(brief: string): string[] {
  return [...brief.matchAll(/^- ([^(\n]+) \(/gm)].map((m) => m[1]!.trim());
}

const isLeaf = (brief: string) => brief.startsWith('Entities (');

/**
 * A model whose report is a function of its brief alone (as a model at temperature 0 is
 * meant to be), so any order of calls must give the same reports. A call whose brief matches
 * `slow` waits until the test opens it. With `levelOrder` (the number of level-0 calls the run
 * makes), every level-0 call waits until all of them were asked: nothing above level 0 can be
 * asked before all of level 0 is written, the order the builder used to follow. Every call is
 * recorded when it is asked and answered.
 */
function reporter(options: { slow?: (brief: string) => boolean; levelOrder?: number } = {}) {
  const events: Array<{ event: 'asked' | 'answered'; brief: string }> = [];
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let leavesAsked = 0;
  let allLeavesAsked!: () => void;
  const leavesReady = new Promise<void>((resolve) => (allLeavesAsked = resolve));
  const models: CommunityModels = {
    embed: async (texts) => texts.map((t) => new Float32Array([t.length, t.charCodeAt(0)])),
    writeReport: async (brief) => {
      events.push({ event: 'asked', brief });
      if (options.levelOrder !== undefined && isLeaf(brief) && ++leavesAsked === options.levelOrder) allLeavesAsked();
      if (options.slow?.(brief) === true) await opened;
      else if (options.levelOrder !== undefined && isLeaf(brief)) await leavesReady;
      else await new Promise((resolve) => setTimeout(resolve, 1));
      events.push({ event: 'answered', brief });
      const names = namesIn(brief).slice(0, 2);
      return { title: `About ${names.join(' & ')}`, summary: `${brief.length} characters on ${names.join(', ')}.` };
    },
  };
  return { models, events, open };
}

/** Group 0's leaf (its brief lists g0's entities), and the parent of groups 2 and 3 (its brief lists their reports). */
const group0Leaf = (brief: string) => isLeaf(brief) && namesIn(brief).some((n) => n.startsWith('g0e'));
const pairOf23 = (brief: string) => brief.startsWith('Groups (') && namesIn(brief).every((n) => n.includes('g2e') || n.includes('g3e'));

/** Rows as stored, without the time they were saved at. */
function stored(kb: MemoryKnowledgeBase) {
  return [...kb.rows.values()].map(({ updatedAt: _updatedAt, ...row }) => row).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Runs `run` while the slow call waits; resolves once the pair of groups 2-3 was asked for, or fails after 2 s. */
async function whileSlow(events: ReturnType<typeof reporter>['events'], open: () => void, run: Promise<unknown>): Promise<void> {
  for (let waited = 0; !events.some((e) => e.event === 'asked' && pairOf23(e.brief)); waited += 5) {
    if (waited > 2000) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const slowAnswered = events.some((e) => e.event === 'answered' && group0Leaf(e.brief));
  open();
  await run;
  expect(events.some((e) => e.event === 'asked' && group0Leaf(e.brief))).toBe(true);
  // Level by level, the pair of groups 2-3 would wait for every leaf, the slow one included.
  expect(events.some((e) => e.event === 'asked' && pairOf23(e.brief))).toBe(true);
  expect(slowAnswered).toBe(false);
  const pairAsked = events.findIndex((e) => e.event === 'asked' && pairOf23(e.brief));
  const slowDone = events.findIndex((e) => e.event === 'answered' && group0Leaf(e.brief));
  expect(pairAsked).toBeLessThan(slowDone);
}

/** 0 for a level-0 call, 1 above, in the order the calls were asked. */
function levelOfEachCall(events: ReturnType<typeof reporter>['events']): number[] {
  return events.filter((e) => e.event === 'asked').map((e) => (isLeaf(e.brief) ? 0 : 1));
}

function changed(): Graph {
  const next = graph();
  next.entities = next.entities.map((e) => (e.id === 'g0e0' || e.id === 'g2e0' ? { ...e, description: `${e.description} Re-indexed.` } : e));
  return next;
}

describe('CommunityBuilder: report calls follow the hierarchy, not its levels', () => {
  it("in a full build, asks for one branch's parent while a leaf of the other branch is still being written", async () => {
    const slow = reporter({ slow: group0Leaf });
    const kb = new MemoryKnowledgeBase(graph());
    const building = new CommunityBuilder(kb, kb, slow.models).refresh(scope);
    await whileSlow(slow.events, slow.open, building);
    const result = await building;

    // The same rows (ids, hashes, reports, key facts, embeddings) as with the calls in level order.
    const ordered = reporter({ levelOrder: slow.events.filter((e) => e.event === 'asked' && isLeaf(e.brief)).length });
    const reference = new MemoryKnowledgeBase(graph());
    const referenceResult = await new CommunityBuilder(reference, reference, ordered.models).refresh(scope);
    expect(levelOfEachCall(ordered.events)).toEqual([...levelOfEachCall(ordered.events)].sort());
    expect(stored(kb)).toEqual(stored(reference));
    expect(result).toMatchObject({ communities: referenceResult.communities, reportsWritten: referenceResult.reportsWritten, llmCalls: referenceResult.llmCalls });
    expect(result.llmCalls).toBe(slow.events.filter((e) => e.event === 'asked').length);
    // Each parent was written from its children's final reports.
    for (const row of stored(kb).filter((r) => r.level > 0)) {
      const brief = slow.events.find((e) => e.event === 'asked' && e.brief.startsWith('Groups (') && namesIn(e.brief).length > 0 && `About ${namesIn(e.brief).slice(0, 2).join(' & ')}` === row.title);
      const children = stored(kb).filter((c) => c.parentId === row.id);
      for (const child of children) expect(brief?.brief).toContain(`- ${child.title} (${child.memberIds.length} entities): ${child.summary}`);
    }
  });

  it('in a refresh of changes in two branches, does the same, with the same outcome as calls answered in level order', async () => {
    const setup = async (models: CommunityModels) => {
      const kb = new MemoryKnowledgeBase(graph());
      await new CommunityBuilder(kb, kb, reporter().models).refresh(scope);
      kb.setGraph(changed());
      return { kb, builder: new CommunityBuilder(kb, kb, models) };
    };
    const slow = reporter({ slow: group0Leaf });
    const slowRun = await setup(slow.models);
    const refresh = slowRun.builder.refresh(scope);
    await whileSlow(slow.events, slow.open, refresh);
    const result = await refresh;
    expect(result.read).toBe('region');

    const ordered = reporter({ levelOrder: slow.events.filter((e) => e.event === 'asked' && isLeaf(e.brief)).length });
    const orderedRun = await setup(ordered.models);
    const reference = await orderedRun.builder.refresh(scope);
    expect(levelOfEachCall(ordered.events)).toEqual([...levelOfEachCall(ordered.events)].sort());
    expect(stored(slowRun.kb)).toEqual(stored(orderedRun.kb));
    expect(result).toMatchObject({ reportsWritten: reference.reportsWritten, llmCalls: reference.llmCalls, unchanged: reference.unchanged });
  });
});
