import { describe, expect, it } from 'vitest';
import { ErrorCode, TrellisError } from './errors';
import { validateChatHistory, validateIdList, withinLength } from './request-limits';

function refusal(run: () => unknown): TrellisError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(TrellisError);
    expect((error as TrellisError).code).toBe(ErrorCode.InvalidArgument);
    return error as TrellisError;
  }
  throw new Error('expected a refusal');
}

describe('validateIdList', () => {
  it('keeps a bounded list of ids, without duplicates', () => {
    expect(validateIdList(['a', ' b ', 'a'], 'document_ids')).toEqual(['a', 'b']);
    expect(validateIdList(Array.from({ length: 1000 }, (_, i) => `d${i}`), 'document_ids')).toHaveLength(1000);
  });

  it('refuses too many, empty and over-long ids, naming the field', () => {
    expect(refusal(() => validateIdList(Array.from({ length: 1001 }, (_, i) => `d${i}`), 'document_ids')).message).toBe('document_ids has more than 1000 ids (1001)');
    expect(refusal(() => validateIdList(['a', ''], 'entity_ids')).message).toBe('entity_ids contains an empty id');
    expect(refusal(() => validateIdList(['x'.repeat(257)], 'entity_ids')).message).toMatch(/entity_ids contains an id longer than 256/);
  });
});

describe('validateChatHistory', () => {
  const turn = (role: string, content = 'hi') => ({ role, content });

  it('accepts user and assistant turns within the limits', () => {
    const history = [turn('user'), turn('assistant')];
    expect(validateChatHistory(history)).toBe(history);
  });

  it('refuses other roles, too many turns and too much text', () => {
    expect(refusal(() => validateChatHistory([turn('user'), turn('system')])).message).toBe('history[1].role is "system"; it must be user or assistant');
    expect(refusal(() => validateChatHistory([turn('')])).message).toMatch(/history\[0\]\.role is ""/);
    expect(refusal(() => validateChatHistory(Array.from({ length: 101 }, () => turn('user')))).message).toBe('history has more than 100 messages (101)');
    expect(refusal(() => validateChatHistory([turn('user', 'x'.repeat(32_001))])).message).toMatch(/history\[0\]\.content is longer than 32000/);
    expect(refusal(() => validateChatHistory(Array.from({ length: 10 }, () => turn('user', 'x'.repeat(30_000))))).message).toBe('history has more than 200000 characters in all (300000)');
  });
});

describe('withinLength', () => {
  it('passes text within the limit and names the field past it', () => {
    expect(withinLength('abc', 'query', 3)).toBe('abc');
    expect(refusal(() => withinLength('abcd', 'query', 3)).message).toBe('query is longer than 3 characters');
  });
});
