import { describe, expect, it } from 'vitest';
import { countTokens } from '@trellis/models';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { markdownSections, splitText, splitTextWithin } from './text-splitter';

const sentence = (i: number) => `Sentence number ${i} talks about topic ${i} in a few plain words.`;

describe('splitText', () => {
  it('packs whole sentences into chunks within the token budget, with overlap', () => {
    const text = Array.from({ length: 60 }, (_, i) => sentence(i)).join(' ');
    const chunks = splitText(text, { chunkSize: 60, overlap: 15, mode: 'sentence' });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(60);
      expect(c.tokenCount).toBe(countTokens(c.text));
      expect(c.text).toMatch(/^Sentence number \d+/);
      expect(c.text).toMatch(/words\.$/);
    }
    // Each chunk starts with the last sentence of the previous one.
    for (let i = 1; i < chunks.length; i++) {
      const lastOfPrevious = chunks[i - 1]!.text.split(/(?<=\.) /).pop()!;
      expect(chunks[i]!.text.startsWith(lastOfPrevious)).toBe(true);
    }
    // Nothing is lost.
    for (let i = 0; i < 60; i++) expect(chunks.some((c) => c.text.includes(sentence(i)))).toBe(true);
  });

  it('cuts a sentence longer than a chunk by words', () => {
    const long = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
    const chunks = splitText(long, { chunkSize: 50, overlap: 10, mode: 'sentence' });
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.tokenCount <= 50)).toBe(true);
    expect(chunks.map((c) => c.text).join(' ')).toContain('word299');
  });

  it('splits markdown by headings and keeps the heading path', () => {
    const md = '# Guide\nIntro text here.\n\n## Install\nRun the installer.\n\n```\n# not a heading\n```\n\n### Linux\nUse the package.\n\n## Usage\nStart it.';
    expect(markdownSections(md).map((s) => s.heading)).toEqual(['Guide', 'Guide > Install', 'Guide > Install > Linux', 'Guide > Usage']);
    const chunks = splitText(md, { chunkSize: 512, overlap: 64, mode: 'markdown' });
    expect(chunks.map((c) => c.heading)).toEqual(['Guide', 'Guide > Install', 'Guide > Install > Linux', 'Guide > Usage']);
    expect(chunks[1]!.text).toContain('# not a heading');
  });

  it('returns no chunk for empty text', () => {
    expect(splitText('   ', { chunkSize: 100, overlap: 10, mode: 'sentence' })).toEqual([]);
  });
});

describe('splitText on input with no whitespace', () => {
  function letters(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += String.fromCharCode(97 + ((i * 7919) % 26));
    return s;
  }
  const time = (run: () => void) => {
    const start = performance.now();
    run();
    return performance.now() - start;
  };

  it('hard-cuts a word longer than a chunk so no chunk exceeds the size, losing nothing', () => {
    const word = letters(20_000);
    const chunks = splitText(`Intro sentence. ${word} and an ending.`, { chunkSize: 512, overlap: 0, mode: 'sentence' });
    expect(chunks.length).toBeGreaterThan(10);
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(512);
      expect(c.tokenCount).toBe(countTokens(c.text));
    }
    expect(chunks.map((c) => c.text).join('').replace(/\s+/g, '')).toBe(`Introsentence.${word}andanending.`);
  });

  it('keeps every chunk within small chunk sizes, even for characters of several tokens', () => {
    const text = '🙂日本'.repeat(500);
    for (const chunkSize of [4, 8, 32]) {
      const chunks = splitText(text, { chunkSize, overlap: 0, mode: 'sentence' });
      expect(chunks.every((c) => c.tokenCount <= chunkSize && c.tokenCount >= 1)).toBe(true);
      expect(chunks.map((c) => c.text).join('')).toBe(text);
    }
  });

  it('splits 1 MB of letters in time linear in its size, every chunk within the size', () => {
    const options = { chunkSize: 512, overlap: 64, mode: 'sentence' as const };
    splitText(letters(1000), options);
    const small = letters(100_000);
    const large = letters(1_000_000);
    const smallTime = Math.min(time(() => splitText(small, options)), time(() => splitText(small, options)));
    let chunks: ReturnType<typeof splitText> = [];
    const largeTime = time(() => {
      chunks = splitText(large, options);
    });
    // Ten times the input: about ten times the time when linear, a hundred when quadratic.
    expect(largeTime).toBeLessThan(Math.max(30 * smallTime, 500));
    expect(largeTime).toBeLessThan(45_000);
    expect(chunks.length).toBeGreaterThan(1_000);
    expect(chunks.every((c) => c.tokenCount <= 512)).toBe(true);
    expect(chunks.map((c) => c.text).join('')).toBe(large);
  });
});

describe('splitTextWithin', () => {
  const letters = (length: number) => Array.from({ length }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join('');
  const options = { chunkSize: 512, overlap: 64, mode: 'sentence' as const };

  it('gives the event loop back while it splits, with the same chunks as splitText', async () => {
    const text = letters(1_000_000);
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    try {
      const chunks = await splitTextWithin(text, options, 60_000);
      expect(chunks).toEqual(splitText(text, options));
    } finally {
      clearInterval(ticker);
    }
    // Held in slices of about 20 ms (a step is at most one 65,536-character count); one
    // synchronous split of this input holds the loop for seconds.
    expect(longestGap).toBeLessThan(1_000);
  });

  it('gives up with RESOURCE_EXHAUSTED past its time budget', async () => {
    const error = await splitTextWithin(letters(1_000_000), options, 50).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrellisError);
    expect((error as TrellisError).code).toBe(ErrorCode.ResourceExhausted);
    expect((error as TrellisError).message).toMatch(/took longer than 50 ms \(TRELLIS_PARSE_TIMEOUT_MS\)/);
  });
});

describe('splitText on mixed words, digits and punctuation', () => {
  it('keeps every chunk within the size when digits, punctuation and spaces meet', () => {
    const words = Array.from({ length: 3_000 }, (_, i) => [`${i}`, `(${i % 7})`, 'x', '...', `word${i}`, '—', `${i * 31}%`][i % 7]!).join(' ');
    for (const chunkSize of [32, 50, 64]) {
      const chunks = splitText(words, { chunkSize, overlap: 8, mode: 'sentence' });
      for (const c of chunks) {
        expect(c.tokenCount).toBe(countTokens(c.text));
        expect(c.tokenCount).toBeLessThanOrEqual(chunkSize);
      }
    }
  });
});
