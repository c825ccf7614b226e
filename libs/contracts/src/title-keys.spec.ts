import { describe, expect, it } from 'vitest';
import { titleKey } from './title-keys';

describe('titleKey', () => {
  it('ignores case, Unicode forms and spacing, and a trailing parenthesised qualifier', () => {
    expect(titleKey('  Mercury   (planet) ')).toBe('mercury');
    expect(titleKey('MERCURY')).toBe(titleKey('mercury'));
    expect(titleKey('Ｍｅｒｃｕｒｙ')).toBe('mercury');
    expect(titleKey('The\tJetsons\n')).toBe('the jetsons');
  });

  it('keeps parentheses that are not a trailing qualifier, and is empty for an empty title', () => {
    expect(titleKey('Guards (and interceptors) overview')).toBe('guards (and interceptors) overview');
    expect(titleKey('')).toBe('');
  });
});
