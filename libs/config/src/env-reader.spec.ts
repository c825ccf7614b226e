import { describe, expect, it } from 'vitest';
import { EnvReader } from './env-reader';

describe('EnvReader', () => {
  it('reads flags, choices and URLs, falling back when unset and naming what is wrong', () => {
    const env = new EnvReader({ ON: 'true', BLANK: '  ', BAD_FLAG: 'yes', MODE: 'fuzzy', URL: 'ftp://x' });
    expect(env.flag('ON', false)).toBe(true);
    expect(env.flag('BLANK', true)).toBe(true);
    expect(env.flag('BAD_FLAG', false)).toBe(false);
    expect(env.choice('MODE', ['auto', 'name', 'embedding'], 'auto')).toBe('auto');
    expect(env.httpUrl('URL')).toBe('ftp://x');
    expect(env.httpUrl('UNSET', 'https://huggingface.co')).toBe('https://huggingface.co');
    expect(env.problems).toEqual(['BAD_FLAG must be true or false', 'MODE must be auto, name or embedding', 'URL must be an http(s) URL']);
  });

  it('refuses integers and fractions out of range, keeping the fallback', () => {
    const env = new EnvReader({ PORT: '70000', SHARE: '0', RATIO: '0.25' });
    expect(env.int('PORT', 8080, 0, 65535)).toBe(8080);
    expect(env.fraction('SHARE', 0.5)).toBe(0.5);
    expect(env.fraction('RATIO', 0.5)).toBe(0.25);
    expect(env.problems).toEqual(['PORT must be an integer between 0 and 65535 (got "70000")', 'SHARE must be a number in (0, 1] (got "0")']);
  });
});
