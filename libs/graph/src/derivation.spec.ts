import { describe, expect, it } from 'vitest';
import { deriveEntity, deriveRelationship, summaryInputsHash } from './derivation';

describe('summaryInputsHash', () => {
  it('changes with the set of descriptions and the name, not with their order or repeats', () => {
    const hash = summaryInputsHash('TiDB', ['A database.', 'Written in Go.']);
    expect(summaryInputsHash('TiDB', ['Written in Go.', 'A database.', 'a database.'])).toBe(hash);
    expect(summaryInputsHash('TiDB', ['A database.'])).not.toBe(hash);
    expect(summaryInputsHash('TiKV', ['A database.', 'Written in Go.'])).not.toBe(hash);
  });
});

describe('deriveEntity and deriveRelationship', () => {
  it('name an entity by its most common spelling, flag it while no mention describes it, and sum relationship strengths', () => {
    const named = [
      { name: 'TiDB', description: '', needsReview: true },
      { name: 'tidb', description: 'A database.', needsReview: false },
      { name: 'TiDB', description: 'a database.', needsReview: true },
    ];
    const entity = deriveEntity(named);
    expect(entity).toMatchObject({ name: 'TiDB', summary: 'A database.', mentionCount: 3, needsReview: false });
    expect(entity.summaryHash).toBe(summaryInputsHash('TiDB', ['', 'A database.', 'a database.']));
    expect(deriveEntity(named.map((m) => ({ ...m, needsReview: true }))).needsReview).toBe(true);
    const relationship = deriveRelationship([
      { description: 'uses', strength: 0.5 },
      { description: 'uses', strength: 2 },
    ]);
    expect(relationship).toMatchObject({ weight: 2.5, summary: 'uses', mentionCount: 2, summaryHash: summaryInputsHash('', ['uses']) });
  });
});

describe('deriveEntity and deriveRelationship from the first mentions', () => {
  it('take counts, weight and review flag from the totals when given, the rest from the mentions', () => {
    const entity = deriveEntity([{ name: 'TiDB', description: 'A database.', needsReview: false }], { mentionCount: 5000, needsReview: false });
    expect(entity).toMatchObject({ name: 'TiDB', summary: 'A database.', mentionCount: 5000, summaryHash: summaryInputsHash('TiDB', ['A database.']) });
    expect(deriveRelationship([{ description: 'uses', strength: 1 }], { mentionCount: 40, weight: 37.5 })).toMatchObject({ weight: 37.5, mentionCount: 40, summary: 'uses' });
  });
});
