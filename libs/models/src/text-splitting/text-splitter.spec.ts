import { describe, expect, it } from 'vitest';
import { countTokens } from '../token-counter';
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
    // Letters that never repeat a window: counts of pieces seen before are remembered, so a
    // periodic text would be counted in no time.
    let seed = 1;
    const text = Array.from({ length: 1_000_000 }, () => String.fromCharCode(97 + ((seed = (seed * 48271) % 2147483647) % 26))).join('');
    const error = await splitTextWithin(text, options, 50).catch((e: unknown) => e);
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

describe('splitText on markdown with code blocks and tables', () => {
  const md = (chunkSize: number) => ({ chunkSize, overlap: 16, mode: 'markdown' as const });
  const prose = Array.from({ length: 12 }, (_, i) => sentence(i)).join(' ');
  const fenceLines = (text: string) => text.split('\n').filter((l) => /^(```|~~~)/.test(l));

  it('keeps a fenced block that fits whole, with its newlines and indentation, and prose around it by sentences', () => {
    const code = ['```typescript', 'async function bootstrap() {', '  const app = await NestFactory.create(AppModule);', '', '  await app.listen(process.env.PORT ?? 3000);', '}', '```'].join('\n');
    const text = `## Start\n\n${prose}\n\n${code}\n\n${prose}`;
    const chunks = splitText(text, md(120));
    const holding = chunks.filter((c) => c.text.includes('bootstrap'));
    expect(holding).toHaveLength(1);
    expect(holding[0]!.text).toContain(code);
    expect(chunks.every((c) => c.heading === 'Start' && c.tokenCount <= 120 && fenceLines(c.text).length % 2 === 0)).toBe(true);
    // Prose chunks still end at sentence ends.
    expect(chunks.filter((c) => !c.text.includes('```')).every((c) => /words\.$/.test(c.text))).toBe(true);
  });

  it('splits a block larger than a chunk on line boundaries, each piece fenced again with its info string', () => {
    const lines = Array.from({ length: 200 }, (_, i) => `    const value${i} = compute(${i}); // line ${i}`);
    const text = ['~~~ts title="big.ts"', ...lines, '~~~'].join('\n');
    const chunks = splitText(text, md(100));
    expect(chunks.length).toBeGreaterThan(5);
    const seen: string[] = [];
    for (const c of chunks) {
      expect(c.tokenCount).toBeLessThanOrEqual(100);
      const body = c.text.split('\n');
      expect(body[0]).toBe('~~~ts title="big.ts"');
      expect(body[body.length - 1]).toBe('~~~');
      for (const line of body.slice(1, -1)) {
        expect(lines).toContain(line);
        seen.push(line);
      }
    }
    // Every line once, in order, none cut (no overlap is carried inside a block).
    expect([...new Set(seen)]).toEqual(lines);
  });

  it('never splits a table row and repeats the header rows in every piece of a long table', () => {
    const header = ['| option | meaning |', '| --- | --- |'];
    const rows = Array.from({ length: 80 }, (_, i) => `| opt${i} | what option ${i} does to the server |`);
    const chunks = splitText(`Intro sentence here.\n\n${[...header, ...rows].join('\n')}`, md(90));
    const tableChunks = chunks.filter((c) => c.text.includes('| opt'));
    expect(tableChunks.length).toBeGreaterThan(3);
    for (const c of tableChunks) {
      expect(c.text).toContain(header.join('\n'));
      for (const line of c.text.split('\n').filter((l) => /^\| opt\d/.test(l))) expect(rows).toContain(line);
    }
    for (const row of rows) expect(tableChunks.some((c) => c.text.includes(row))).toBe(true);
    // Rows with no delimiter row are kept whole too.
    const headless = splitText(rows.join('\n'), md(40));
    for (const c of headless) for (const line of c.text.split('\n')) expect(rows).toContain(line);
  });

  it('cuts inside a line only when the line alone is larger than a chunk, still fenced', () => {
    const long = Array.from({ length: 400 }, (_, i) => `x${i}`).join('+');
    const chunks = splitText(['```js', 'short();', long, 'after();', '```'].join('\n'), md(64));
    expect(chunks.every((c) => c.text.startsWith('```js\n') && c.text.endsWith('\n```') && c.tokenCount <= 64)).toBe(true);
    // Small pieces may share a chunk, each fenced.
    const content = chunks.flatMap((c) => c.text.split('\n')).filter((l) => !/^(```js|```)?$/.test(l));
    expect(content.join('')).toBe(`short();${long}after();`);
  });

  it('splits an unclosed fence of 1 MB into fenced pieces within the size', () => {
    const body = Array.from({ length: 50_000 }, (_, i) => `line ${i} ${'z'.repeat(i % 20)}`).join('\n');
    const chunks = splitText(`Intro.\n\n\`\`\`sh\n${body}`, md(512));
    expect(body.length).toBeGreaterThan(1_000_000);
    expect(chunks.length).toBeGreaterThan(100);
    expect(chunks[0]!.text.startsWith('Intro.\n\n```sh\n')).toBe(true);
    expect(chunks.every((c) => c.text.endsWith('\n```') && c.tokenCount <= 512)).toBe(true);
    expect(chunks.slice(1).every((c) => c.text.startsWith('```sh\n'))).toBe(true);
    const lines = chunks.flatMap((c) => c.text.split('\n')).filter((l) => !['Intro.', '```sh', '```', ''].includes(l));
    expect(lines.join('\n')).toBe(body);
    // One line with no whitespace, longer than a chunk: cut inside it, every piece still fenced.
    const word = 'abcdefghij'.repeat(20_000);
    const cut = splitText(`\`\`\`\n${word}`, md(512));
    expect(cut.every((c) => c.text.startsWith('```\n') && c.text.endsWith('\n```') && c.tokenCount <= 512)).toBe(true);
    expect(cut.map((c) => c.text.slice(4, -4)).join('')).toBe(word);
  });

  it('splits a line of 100,000 backticks and deeply nested tags as prose, within the size and losing nothing', () => {
    const ticks = '`'.repeat(100_000);
    const nested = `${'<div><span>'.repeat(20_000)}deep${'</span></div>'.repeat(20_000)}`;
    const content = (text: string) => text.split('\n').filter((l) => l !== '```').join('').replace(/\s+/g, '');
    for (const text of [ticks, `${ticks}\nafter`, nested, `\`\`\`\n${nested}`]) {
      const chunks = splitText(text, md(256));
      expect(chunks.every((c) => c.tokenCount <= 256 && c.tokenCount === countTokens(c.text))).toBe(true);
      expect(content(chunks.map((c) => c.text).join('\n'))).toBe(content(text));
    }
  });

  it('keeps list items on lines of their own, in both modes', () => {
    const text = 'Features:\n- Producer\n- Consumer groups with pause, resume, and seek\n* Message headers\n1. GZIP compression. Snappy too\n\nAfter the list.';
    for (const mode of ['markdown', 'sentence'] as const) {
      const [chunk, ...rest] = splitText(text, { chunkSize: 512, overlap: 0, mode });
      expect(rest).toEqual([]);
      expect(chunk!.text).toBe('Features:\n- Producer\n- Consumer groups with pause, resume, and seek\n* Message headers\n1. GZIP compression. Snappy too\n\nAfter the list.');
    }
  });
});
