import { describe, expect, it } from 'vitest';
import { MAX_PIECE_LENGTH, countTokens, countTokensUpTo, windows } from './token-counter';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Tiktoken } = require('js-tiktoken/lite') as { Tiktoken: new (ranks: unknown) => { encode(text: string, a: string[], d: string[]): number[] } };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const reference = new Tiktoken(require('js-tiktoken/ranks/cl100k_base'));

/** Letters with no whitespace, varied so no byte-pair shortcut applies. */
function letters(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += String.fromCharCode(97 + ((i * 7919) % 26));
  return s;
}

function millis(run: () => void): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

describe('countTokens', () => {
  it('equals cl100k for ordinary text of every kind', () => {
    const samples = [
      'The quick brown fox jumps over the lazy dog.',
      "It's what they'll say: 12345 apples, 3.14159 pies!",
      'Ünïcödé, 日本語のテキスト, emoji 🙂🙂 and Ελληνικά.',
      'indentation\n\n    code();\n\t\ttabs   and   spaces  \n',
      'pneumonoultramicroscopicsilicovolcanoconiosis',
      '!!!??? ... --- *** ///',
    ];
    for (const sample of samples) expect(countTokens(sample), sample).toBe(reference.encode(sample, [], []).length);
  });

  it('counts special-token spellings as text instead of throwing', () => {
    expect(countTokens('before <|endoftext|> after')).toBe(reference.encode('before <|endoftext|> after', [], []).length);
  });

  it('takes time linear in the length of a run with no whitespace', () => {
    countTokens(letters(1000)); // loads the rank table
    const small = letters(100_000);
    const large = letters(1_000_000);
    const smallTime = Math.min(millis(() => countTokens(small)), millis(() => countTokens(small)));
    const largeTime = millis(() => countTokens(large));
    // Ten times the input: a linear counter takes about ten times as long, a quadratic one a
    // hundred times (js-tiktoken alone needed minutes for 20 KB of letters).
    expect(largeTime).toBeLessThan(Math.max(30 * smallTime, 200));
    expect(largeTime).toBeLessThan(30_000);
    // The windowed count stays close to the letters' real density (about 2 letters a token).
    expect(countTokens(large)).toBeGreaterThan(large.length / 4);
    expect(countTokens(large)).toBeLessThan(large.length);
  });
});

describe('windows', () => {
  it('cuts into slices of the given length that join back to the input', () => {
    const text = letters(100);
    const parts = windows(text, MAX_PIECE_LENGTH);
    expect(parts.join('')).toBe(text);
    expect(parts.every((p) => p.length <= MAX_PIECE_LENGTH)).toBe(true);
  });

  it('never cuts a surrogate pair', () => {
    const text = '🙂'.repeat(50);
    const parts = windows(text, 3);
    expect(parts.join('')).toBe(text);
    for (const p of parts) expect(p).toMatch(/^(🙂)+$/u);
  });
});

describe('countTokensUpTo', () => {
  it('is the count when it fits, and over the cap without counting when the text cannot fit', () => {
    expect(countTokensUpTo('The quick brown fox.', 10)).toBe(countTokens('The quick brown fox.'));
    expect(countTokensUpTo('The quick brown fox.', 2)).toBe(countTokens('The quick brown fox.'));
    const huge = letters(10_000_000);
    const started = performance.now();
    expect(countTokensUpTo(huge, 512)).toBeGreaterThan(512);
    expect(performance.now() - started).toBeLessThan(50);
  });
});
