import { describe, expect, it } from 'vitest';
import { summaryInputsHash } from './derivation';

describe('summaryInputsHash', () => {
  it('changes with the set of descriptions and the name, not with their order or repeats', () => {
    const hash = summaryInputsHash('TiDB', ['A database.', 'Written in Go.']);
    expect(summaryInputsHash('TiDB', ['Written in Go.', 'A database.', 'a database.'])).toBe(hash);
    expect(summaryInputsHash('TiDB', ['A database.'])).not.toBe(hash);
    expect(summaryInputsHash('TiKV', ['A database.', 'Written in Go.'])).not.toBe(hash);
  });
});
