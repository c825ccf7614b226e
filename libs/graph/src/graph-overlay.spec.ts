import { describe, expect, it } from 'vitest';
import type { EntityMentionWrite, RelationshipMentionWrite } from './graph-records';
import { decodeChunkExtraction, encodeChunkExtraction } from './graph-edit-encoding';
import { laterEditsBlockingUndo } from './graph-edit-policy';
import { entitiesThroughMerges, overlayFingerprint, relationshipKey, rewriteChunkWrites, settleRelationships } from './graph-overlay';
import type { OverlayState } from './graph-overlay';

const entity = (id: string, description = ''): EntityMentionWrite => ({ entityId: id, name: id.toUpperCase(), normalizedName: id, type: 't', description, embedding: new Float32Array([1, 2]) });
const rel = (id: string, sourceId: string, targetId: string, label = 'knows'): RelationshipMentionWrite => ({
  relationshipId: id,
  sourceId,
  targetId,
  label,
  description: id,
  strength: 1,
  embedding: new Float32Array([0.5]),
});

const state = (partial: Partial<OverlayState>): OverlayState => ({ deletedEntities: new Map(), deletedRelationships: new Map(), merges: new Map(), ...partial });

describe('rewriteChunkWrites', () => {
  it('follows merge chains, keeps the target its own mention, and records the merges passed', () => {
    const overlay = state({ merges: new Map([['a', { targetId: 'b', editId: 'm1' }], ['b', { targetId: 'c', editId: 'm2' }]]) });
    const out = rewriteChunkWrites(overlay, [entity('a', 'from a'), entity('c', 'own'), entity('d')], []);
    expect(out.entities.map((e) => [e.entityId, e.name, e.description])).toEqual([['c', 'C', 'own'], ['d', 'D', '']]);
    expect([...out.editIds].sort()).toEqual(['m1', 'm2']);
  });

  it('blanks the name of a redirected mention so the target keeps its own', () => {
    const out = rewriteChunkWrites(state({ merges: new Map([['a', { targetId: 'b', editId: 'm' }]]) }), [entity('a', 'x')], []);
    expect(out.entities).toEqual([{ ...entity('a', 'x'), entityId: 'b', name: '' }]);
  });

  it('drops tombstoned entities, their relationships and tombstoned relationships, and self-loops made by a merge', () => {
    const overlay = state({
      deletedEntities: new Map([['x', 'd1']]),
      deletedRelationships: new Map([['r-gone', 'd2']]),
      merges: new Map([['a', { targetId: 'b', editId: 'm' }]]),
    });
    const out = rewriteChunkWrites(overlay, [entity('a'), entity('b'), entity('x'), entity('y')], [rel('r-x', 'x', 'y'), rel('r-gone', 'b', 'y'), rel('r-ab', 'a', 'b'), rel('r-ay', 'a', 'y')]);
    expect(out.entities.map((e) => e.entityId)).toEqual(['b', 'y']);
    expect(out.relationships.map((r) => [r.relationshipId, r.sourceId, r.targetId, r.rewired])).toEqual([['r-ay', 'b', 'y', true]]);
    expect([...out.editIds].sort()).toEqual(['d1', 'd2', 'm']);
  });

  it('folds a rewired relationship into the existing one with the same ends and label', () => {
    const overlay = state({ merges: new Map([['a', { targetId: 'b', editId: 'm' }]]) });
    const rewritten = rewriteChunkWrites(overlay, [entity('a'), entity('b'), entity('y')], [rel('r-ay', 'a', 'y'), rel('r-by', 'b', 'y')]);
    const settled = settleRelationships(overlay, rewritten, new Map([[relationshipKey('b', 'y', 'knows'), 'r-by']]));
    expect(settled.map((r) => [r.relationshipId, r.description])).toEqual([['r-by', 'r-by']]);
  });
});

describe('undo bookkeeping', () => {
  it('round-trips recorded chunk writes with their embeddings', () => {
    const x = { entities: [entity('a')], relationships: [rel('r', 'a', 'b')] };
    expect(decodeChunkExtraction(encodeChunkExtraction(x))).toEqual(x);
  });

  it('names later active edits that touch the same ids', () => {
    const edit = { id: 'e2', createdAt: '2026-01-01T00:00:02Z', targetIds: ['a', 'b'] };
    const active = [
      { id: 'e1', createdAt: '2026-01-01T00:00:01Z', targetIds: ['b'] },
      edit,
      { id: 'e3', createdAt: '2026-01-01T00:00:03Z', targetIds: ['c'] },
      { id: 'e4', createdAt: '2026-01-01T00:00:04Z', targetIds: ['b', 'c'] },
    ];
    expect(laterEditsBlockingUndo(edit, active)).toEqual(['e4']);
  });
});

describe('entitiesThroughMerges and overlayFingerprint', () => {
  it('follow merge chains to what a write must lock, and tell overlay states apart whatever the insertion order', () => {
    const merges = new Map([
      ['a', { targetId: 'b', editId: 'e1' }],
      ['b', { targetId: 'c', editId: 'e2' }],
    ]);
    const state: OverlayState = { deletedEntities: new Map(), deletedRelationships: new Map(), merges };
    expect([...entitiesThroughMerges(state, ['a', 'x'])].sort()).toEqual(['a', 'b', 'c', 'x']);
    const reordered: OverlayState = { ...state, merges: new Map([...merges].reverse()) };
    expect(overlayFingerprint(reordered)).toBe(overlayFingerprint(state));
    expect(overlayFingerprint({ ...state, deletedEntities: new Map([['c', 'e3']]) })).not.toBe(overlayFingerprint(state));
  });
});
