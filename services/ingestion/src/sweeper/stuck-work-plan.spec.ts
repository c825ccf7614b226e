import { describe, expect, it } from 'vitest';
import type { StuckChunk, StuckDocument } from '@trellis/storage';
import { planSweep } from './stuck-work-plan';

const at = '2026-01-01T00:00:00.000Z';
const doc = (documentId: string, redriveCount = 0, tenantId = 't'): StuckDocument => ({ tenantId, kbId: 'kb', documentId, version: 1, status: 'pending', contentHash: `h-${documentId}`, redriveCount, updatedAt: at });
const chunk = (documentId: string, chunkId: string, status: 'embedded' | 'extracted', redriveCount = 0): StuckChunk => ({
  tenantId: 't', kbId: 'kb', documentId, chunkId, version: 1, status, contentHash: `h-${chunkId}`, redriveCount, updatedAt: at,
});

describe('planSweep', () => {
  it('groups stuck work by document version: one action per version, chunks together', () => {
    const plan = planSweep([doc('a')], [chunk('b', 'b0', 'embedded'), chunk('b', 'b1', 'extracted'), chunk('c', 'c0', 'extracted')], 3);
    expect(plan.map((a) => [a.kind, a.documentId, a.document?.documentId ?? null, a.chunks.map((c) => c.chunkId)])).toEqual([
      ['redrive', 'a', 'a', []],
      ['redrive', 'b', null, ['b0', 'b1']],
      ['redrive', 'c', null, ['c0']],
    ]);
  });

  it('keeps tenants apart: the same document id of two tenants is two actions', () => {
    const plan = planSweep([doc('a', 0, 't1'), doc('a', 0, 't2')], [], 3);
    expect(plan.map((a) => a.scope.tenantId)).toEqual(['t1', 't2']);
  });

  it('re-drives below the cap and gives up at it, with a reason naming what was stuck and the setting', () => {
    const plan = planSweep([doc('young', 2), doc('poison', 3)], [chunk('stale', 's0', 'extracted', 3), chunk('stale', 's1', 'embedded', 3)], 3);
    expect(plan.map((a) => [a.documentId, a.kind])).toEqual([['young', 'redrive'], ['poison', 'give-up'], ['stale', 'give-up']]);
    expect(plan[0]!.reason).toBeUndefined();
    expect(plan[1]!.reason).toBe('indexing gave up: document stuck in pending after 3 re-drives by the sweeper (TRELLIS_MAX_REDRIVES); no stage finished its event');
    expect(plan[2]!.reason).toBe('indexing gave up: 2 chunk(s) stuck in embedded/extracted after 3 re-drives by the sweeper (TRELLIS_MAX_REDRIVES); no stage finished its event');
  });

  it('plans nothing when nothing is stuck', () => {
    expect(planSweep([], [], 5)).toEqual([]);
  });
});
