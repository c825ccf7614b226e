import { deflateSync } from 'node:zlib';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { ErrorCode, TrellisError } from '@trellis/contracts';
import { makeDocx, makePdf, zipOfZeros } from '@trellis/testing';
import { DEFAULT_PARSE_LIMITS, parseDocument } from './document-parser';
import type { ParseLimits } from './document-parser';
import { assertPdfStreamsWithin } from './pdf-limits';

async function failure(promise: Promise<unknown>): Promise<TrellisError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TrellisError);
  return error as TrellisError;
}

const limits = (overrides: Partial<ParseLimits>): ParseLimits => ({ ...DEFAULT_PARSE_LIMITS, ...overrides });

describe('parseDocument', () => {
  it('reads AsciiDoc as markdown in the parse worker, with no include reaching the file system', async () => {
    const adoc = [
      '= Rate limiting', '', '== Setup', '', 'Install *@nestjs/throttler* and import `ThrottlerModule`, see link:https://docs.nestjs.com[the docs].', '',
      'NOTE: Limits apply per client.', '', '[source,typescript]', '----', 'ThrottlerModule.forRoot([{ ttl: 60000, limit: 10 }]);', '----', '',
      '* ttl: the window', '* limit: the requests per window', '', '|===', '|Option |Meaning', '', '|ttl |window in ms', '|===', '',
      'include::/etc/passwd[]', '', '=== Storage', '', 'Redis keeps the counters &amp; more.',
    ].join('\n');
    const parsed = await parseDocument(Buffer.from(adoc), 'rate-limiting.adoc', '');
    expect(parsed.mimeType).toBe('text/markdown');
    expect(parsed.text).toContain('# Rate limiting\n\n## Setup\n\nInstall @nestjs/throttler and import `ThrottlerModule`, see the docs.');
    expect(parsed.text).toContain('Note: Limits apply per client.');
    expect(parsed.text).toContain('```typescript\nThrottlerModule.forRoot([{ ttl: 60000, limit: 10 }]);\n```');
    expect(parsed.text).toContain('- ttl: the window\n- limit: the requests per window');
    expect(parsed.text).toContain('| Option | Meaning |\n| --- | --- |\n| ttl | window in ms |');
    expect(parsed.text).toContain('### Storage\n\nRedis keeps the counters & more.');
    expect(parsed.text).not.toMatch(/root:/);
  });

  it('reads a source file as one fenced block of its language, under its name', async () => {
    const code = 'export const greeting = `hello`;\nconst md = "```js\\nnot a fence\\n```";\n\n\n\nexport function f(): void {}\n';
    const parsed = await parseDocument(Buffer.from(code), 'src/greeting.ts', '');
    expect(parsed.mimeType).toBe('text/markdown');
    expect(parsed.metadata).toEqual({ language: 'typescript' });
    // Longer than the longest run of backticks inside, so nothing in the file closes it.
    expect(parsed.text).toBe('# greeting.ts\n\n````typescript\nexport const greeting = `hello`;\nconst md = "```js\\nnot a fence\\n```";\n\nexport function f(): void {}\n````\n');
    expect((await parseDocument(Buffer.from('SELECT 1;'), 'q.sql', '')).metadata).toEqual({ language: 'sql' });
    expect((await parseDocument(Buffer.from('x = 1'), 'upload', 'text/x-python')).metadata).toEqual({ language: 'python' });
    await expect(parseDocument(Buffer.from(' \n\n '), 'empty.go', '')).rejects.toThrow(/contains no text/);
  });

  it('parses HTML, PDF and DOCX in the parse worker', async () => {
    expect((await parseDocument(Buffer.from('<html><body><h1>Title</h1><p>Hello <b>there</b></p></body></html>'), 'a.html', '')).text).toBe('Title\n\nHello there');
    expect((await parseDocument(makePdf('Grace Hopper built a compiler.'), 'a.pdf', '')).text).toContain('Grace Hopper built a compiler.');
    expect((await parseDocument(await makeDocx(['Alan Turing.', 'Machines.']), 'a.docx', '')).text).toBe('Alan Turing.\n\nMachines.');
  });

  it('reads markdown, MDX and text over 1 MB in the parse worker, as it reads them in place, within the parse budget', async () => {
    const section = (n: number) => `## Part ${n}\n\nThe <b>guard</b> runs before the <code>pipe</code>.\n\n<div>\n\nAfter the div.\n\n</div>\n`;
    const small = Array.from({ length: 3 }, (_, n) => section(n)).join('\n');
    const large = Array.from({ length: 12_000 }, (_, n) => section(n)).join('\n');
    expect(Buffer.byteLength(large)).toBeGreaterThan(1024 * 1024);
    const inPlace = (await parseDocument(Buffer.from(small), 'small.md', '')).text;
    const inWorker = (await parseDocument(Buffer.from(large), 'large.md', '')).text;
    expect(inPlace).not.toContain('<b>');
    // The same markdown without its HTML, section after section.
    expect(inWorker.startsWith(inPlace)).toBe(true);
    expect(inWorker.split('## Part ').length - 1).toBe(12_000);
    expect(inWorker).not.toMatch(/<\/?(b|code|div)>/);
    expect((await parseDocument(Buffer.from(large), 'large.mdx', '')).mimeType).toBe('text/markdown');
    // Only a worker is held to the parse time: the small one parses, the large one is stopped.
    const budget = limits({ timeoutMs: 1 });
    expect((await parseDocument(Buffer.from(small), 'small.md', '', budget)).text).toBe(inPlace);
    for (const name of ['large.md', 'large.txt']) {
      const error = await failure(parseDocument(Buffer.from(large), name, '', budget));
      expect(error.code).toBe(ErrorCode.ResourceExhausted);
    }
    // Bytes that are not UTF-8 are refused as they are in place.
    const broken = Buffer.concat([Buffer.from(large), Buffer.from([0xff, 0xfe])]);
    expect((await failure(parseDocument(broken, 'broken.md', ''))).message).toMatch(/"broken.md" is not valid UTF-8 text/);
  });

  it('keeps the messages of broken files', async () => {
    expect((await failure(parseDocument(Buffer.from('PK\x03\x04 not really a zip'), 'broken.docx', ''))).message).toMatch(/could not read DOCX "broken.docx"/);
    expect((await failure(parseDocument(Buffer.from('plain'), 'fake.pdf', ''))).message).toMatch(/not a PDF/);
    expect((await failure(parseDocument(Buffer.from([0xff, 0xfe, 0x41]), 'bad.html', ''))).message).toMatch(/not valid UTF-8/);
    expect((await failure(parseDocument(Buffer.from([0xff, 0xfe, 0x41]), 'bad.txt', ''))).code).toBe(ErrorCode.InvalidArgument);
  });

  it('refuses a DOCX that inflates past the cap without inflating it all', async () => {
    // 1 GB of zeros in one entry, about 1 MB on the wire.
    const bomb = await zipOfZeros('word/document.xml', 1024 * 1024 * 1024);
    expect(bomb.byteLength).toBeLessThan(2 * 1024 * 1024);
    const rssBefore = process.memoryUsage().rss;
    const started = Date.now();
    const error = await failure(parseDocument(bomb, 'bomb.docx', '', limits({ maxDecompressedBytes: 8 * 1024 * 1024 })));
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.message).toMatch(/could not read DOCX "bomb.docx": the archive inflates to more than 8 MB/);
    // Inflating it all would take a gigabyte and seconds; the worker isolate itself is tens of MB.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('refuses a DOCX with more entries than the cap, and one whose single entry passes the size cap', async () => {
    const zip = new JSZip();
    for (let i = 0; i < 30; i++) zip.file(`word/part${i}.xml`, '<x/>');
    const many = await zip.generateAsync({ type: 'nodebuffer' });
    expect((await failure(parseDocument(many, 'many.docx', '', limits({ maxZipEntries: 20 })))).message).toMatch(/has 31 entries, more than the limit of 20/);
    const one = new JSZip();
    one.file('word/document.xml', Buffer.alloc(4 * 1024 * 1024));
    expect((await failure(parseDocument(await one.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }), 'a.docx', '', limits({ maxDecompressedBytes: 1024 * 1024 })))).message).toMatch(/inflates to more than 1 MB/);
  });

  it('refuses a PDF whose streams inflate past the cap, and lets streams within it through', async () => {
    const pdfWith = (stream: Buffer) => Buffer.concat([
      Buffer.from('%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n4 0 obj\n<< /Length ' + stream.length + ' /Filter /FlateDecode >>\nstream\n', 'latin1'),
      stream,
      Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n', 'latin1'),
    ]);
    const bomb = pdfWith(deflateSync(Buffer.alloc(64 * 1024 * 1024, ' ')));
    expect(bomb.byteLength).toBeLessThan(1024 * 1024);
    const error = await failure(parseDocument(bomb, 'bomb.pdf', '', limits({ maxDecompressedBytes: 8 * 1024 * 1024 })));
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.message).toMatch(/could not read PDF "bomb.pdf": its streams inflate to more than 8 MB \(TRELLIS_MAX_DECOMPRESSED_BYTES\)/);
    const small = pdfWith(deflateSync(Buffer.alloc(4096, ' ')));
    expect(() => assertPdfStreamsWithin(small, 8 * 1024 * 1024)).not.toThrow();
    expect(() => assertPdfStreamsWithin(small, 4095)).toThrow(/inflate to more than/);
    expect(() => assertPdfStreamsWithin(Buffer.concat([small, small]), 6000)).toThrow(/inflate to more than/);
    expect((await parseDocument(makePdf('Plain streams count for nothing.'), 'ok.pdf', '', limits({ maxDecompressedBytes: 1024 }))).text).toContain('Plain streams count for nothing.');
  });

  it('refuses HTML nested deeper than the cap quickly, and accepts unclosed paragraphs', async () => {
    const deep = '<div>'.repeat(100_000) + 'x' + '</div>'.repeat(100_000);
    const started = Date.now();
    const error = await failure(parseDocument(Buffer.from(deep), 'deep.html', ''));
    expect(error.code).toBe(ErrorCode.InvalidArgument);
    expect(error.message).toMatch(/could not read HTML "deep.html": the HTML nests elements more than 1000 deep/);
    expect(Date.now() - started).toBeLessThan(10_000);
    const sloppy = (i: number) => `<p>para ${i}<br><img src=x><p>more<ul><li>a<li>b</ul><table><tr><td>a<td>b<tr><th>c</table><div/>`;
    const paragraphs = '<body>' + Array.from({ length: 5_000 }, (_, i) => sloppy(i)).join('') + '<!-- <div><div> --><script>"<div><div>"</script></body>';
    const parsed = await parseDocument(Buffer.from(paragraphs), 'flat.html', '', limits({ maxHtmlDepth: 10 }));
    expect(parsed.text).toContain('para 4999');
  });

  it('fails a document whose parse passes the heap cap with RESOURCE_EXHAUSTED', async () => {
    const big = '<body>' + '<p>A paragraph of text in a large page.</p>'.repeat(200_000) + '</body>';
    const error = await failure(parseDocument(Buffer.from(big), 'heavy.html', '', limits({ maxHeapMb: 16 })));
    expect(error.code).toBe(ErrorCode.ResourceExhausted);
    expect(error.message).toBe('parsing "heavy.html" needed more than 16 MB of memory');
  });

  it('fails a document that passes its parse time with RESOURCE_EXHAUSTED, and the next one parses', async () => {
    const big = '<body>' + '<p>A paragraph of text in a large page.</p>'.repeat(200_000) + '</body>';
    const error = await failure(parseDocument(Buffer.from(big), 'slow.html', '', limits({ timeoutMs: 200 })));
    expect(error.code).toBe(ErrorCode.ResourceExhausted);
    expect(error.message).toMatch(/parsing "slow.html" took longer than 200 ms \(TRELLIS_PARSE_TIMEOUT_MS\)/);
    expect((await parseDocument(Buffer.from('<p>after</p>'), 'next.html', '')).text).toBe('after');
  });
});
