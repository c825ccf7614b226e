import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { v1 } from '@trellis/contracts';
import { makeDocx, makePdf, startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { grpcCode, waitUntilIndexed } from './helpers';

const LIMIT = 200_000;

describe('standalone: bad input gets a clear error and loses nothing', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  let goodId: string;

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_MAX_UPLOAD_BYTES: String(LIMIT) } });
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: 'kb' });
    const good = await client.uploadDocument({ knowledgeBase: 'kb', filename: 'good.txt' }, Buffer.from('Ada Lovelace wrote the first published algorithm for the Analytical Engine.'));
    goodId = good.id;
    await waitUntilIndexed(client, 'kb', [goodId]);
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  const upload = (filename: string, bytes: Uint8Array, knowledgeBase = 'kb') => client.uploadDocument({ knowledgeBase, filename }, bytes);

  it('rejects an unknown file type with INVALID_ARGUMENT and shows the error in status', async () => {
    const error = await grpcCode(upload('tool.exe', Buffer.from('MZ\x90\x00binary')));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/unsupported file type.*\.pdf/);
    const documents = await client.listAllDocuments('kb');
    const failed = documents.find((d) => d.sourceUri === 'tool.exe')!;
    expect(failed.status).toBe('INDEX_STATUS_FAILED');
    expect(failed.error).toMatch(/unsupported file type/);
    expect(failed.currentStage).toBe('failed');
    expect(failed.stages).toMatchObject([{ name: 'ingestion', failures: 1, lastError: expect.stringMatching(/unsupported file type/) }]);
  });

  it('rejects a corrupt PDF and a corrupt DOCX with INVALID_ARGUMENT', async () => {
    const truncated = makePdf('Hello').subarray(0, 60);
    const pdf = await grpcCode(upload('broken.pdf', truncated));
    expect(pdf.code).toBe(status.INVALID_ARGUMENT);
    expect(pdf.details).toMatch(/could not read PDF "broken.pdf"/);
    const notPdf = await grpcCode(upload('fake.pdf', Buffer.from('just text pretending')));
    expect(notPdf.details).toMatch(/not a PDF/);
    const docx = await grpcCode(upload('broken.docx', Buffer.from('PK\x03\x04 not really a zip')));
    expect(docx.code).toBe(status.INVALID_ARGUMENT);
    expect(docx.details).toMatch(/could not read DOCX "broken.docx"/);
    const documents = await client.listAllDocuments('kb');
    expect(documents.find((d) => d.sourceUri === 'broken.pdf')?.error).toMatch(/could not read PDF/);
  });

  it('rejects empty files and files with no text', async () => {
    expect((await grpcCode(upload('empty.txt', Buffer.alloc(0)))).details).toMatch(/is empty/);
    expect((await grpcCode(upload('blank.md', Buffer.from('  \n\n \t')))).details).toMatch(/contains no text/);
  });

  it('rejects invalid UTF-8 text', async () => {
    const error = await grpcCode(upload('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe])));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/not valid UTF-8/);
  });

  it('rejects a file over the upload limit with RESOURCE_EXHAUSTED', async () => {
    const error = await grpcCode(upload('huge.txt', Buffer.alloc(LIMIT + 1, 'a')));
    expect(error.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(error.details).toMatch(/larger than the upload limit/);
  });

  it('answers NOT_FOUND for an unknown knowledge base, everywhere', async () => {
    expect((await grpcCode(upload('a.txt', Buffer.from('hello world'), 'nope'))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.listDocuments('nope'))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.retrieveChunks({ knowledgeBase: 'nope', query: 'x' }))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.ask({ knowledgeBase: 'nope', question: 'x' }))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.getEntity('kb', 'No Such Entity'))).code).toBe(status.NOT_FOUND);
  });

  it('rejects an empty question, an unknown mode and an out-of-range top_k', async () => {
    expect((await grpcCode(client.ask({ knowledgeBase: 'kb', question: '   ' }))).details).toMatch(/question is empty/);
    expect((await grpcCode(client.retrieveChunks({ knowledgeBase: 'kb', query: '' }))).code).toBe(status.INVALID_ARGUMENT);
    const mode = await grpcCode(client.retrieveChunks({ knowledgeBase: 'kb', query: 'x', mode: 'magic' }));
    expect(mode.details).toMatch(/unknown mode "magic"/);
    const topK = await grpcCode(client.retrieveChunks({ knowledgeBase: 'kb', query: 'x', topK: 1001 }));
    expect(topK.code).toBe(status.INVALID_ARGUMENT);
    expect(topK.details).toMatch(/top_k must be between 1 and 1000/);
    const long = await grpcCode(client.retrieveChunks({ knowledgeBase: 'kb', query: 'x'.repeat(8001) }));
    expect(long.details).toMatch(/longer than 8000/);
  });

  it('refuses URLs that reach inside (its own /metrics, metadata addresses), INVALID_ARGUMENT for a bad URL', async () => {
    for (const url of [`${server.httpUrl}/metrics`, 'http://127.0.0.1:1/doc.html', 'http://[::1]:1/', 'http://169.254.169.254/latest/meta-data/', 'http://0.0.0.0:1/']) {
      const refused = await grpcCode(client.addDocumentFromUrl({ knowledgeBase: 'kb', url }));
      expect(refused.code, url).toBe(status.INVALID_ARGUMENT);
      expect(refused.details, url).toMatch(/refusing to fetch .*TRELLIS_URL_FETCH_ALLOW/);
    }
    expect((await client.listAllDocuments('kb')).some((d) => d.sourceUri.includes('/metrics'))).toBe(false);
    expect((await grpcCode(client.addDocumentFromUrl({ knowledgeBase: 'kb', url: 'ftp://example/doc' }))).code).toBe(status.INVALID_ARGUMENT);
  });

  it('rejects a duplicate or invalid knowledge base name', async () => {
    expect((await grpcCode(client.createKnowledgeBase({ name: 'kb' }))).code).toBe(status.ALREADY_EXISTS);
    expect((await grpcCode(client.createKnowledgeBase({ name: 'bad name!' }))).code).toBe(status.INVALID_ARGUMENT);
  });

  it('parses valid PDF and DOCX files and indexes them', async () => {
    const pdf = await upload('note.pdf', makePdf('Grace Hopper built the first compiler for a computer language.'));
    const docx = await upload('memo.docx', await makeDocx(['Alan Turing described the universal machine.', 'It can simulate any other machine.']));
    expect(pdf.mimeType).toBe('application/pdf');
    await waitUntilIndexed(client, 'kb', [pdf.id, docx.id]);
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'kb', query: 'Grace Hopper compiler', mode: 'fulltext' });
    expect(chunks[0]?.documentId).toBe(pdf.id);
    expect(chunks[0]?.text).toContain('first compiler');
    const turing = await client.retrieveChunks({ knowledgeBase: 'kb', query: 'universal machine', mode: 'fulltext' });
    expect(turing.chunks[0]?.documentId).toBe(docx.id);
  });

  it('pages ListDocuments without losing or repeating a document, filters by status, and refuses bad paging', async () => {
    const all = await client.listAllDocuments('kb');
    expect(all.length).toBeGreaterThanOrEqual(5);
    const paged: string[] = [];
    let pageToken = '';
    let pages = 0;
    do {
      const page = await client.listDocuments('kb', { pageSize: 2, pageToken });
      expect(page.documents.length).toBeLessThanOrEqual(2);
      paged.push(...page.documents.map((d) => d.id));
      pageToken = page.nextPageToken;
      pages++;
    } while (pageToken !== '');
    expect(pages).toBe(Math.ceil(all.length / 2));
    expect(paged).toEqual([...paged].sort());
    expect(new Set(paged)).toEqual(new Set(all.map((d) => d.id)));

    const failed = await client.listAllDocuments('kb', v1.IndexStatus.INDEX_STATUS_FAILED);
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((d) => d.status === 'INDEX_STATUS_FAILED')).toBe(true);
    expect(failed.map((d) => d.id).sort()).toEqual(all.filter((d) => d.status === 'INDEX_STATUS_FAILED').map((d) => d.id).sort());

    const tooBig = await grpcCode(client.listDocuments('kb', { pageSize: 1001 }));
    expect(tooBig).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/page_size must be at most 1000/) });
    for (const pageToken of ['not base64!', '_w', 'x'.repeat(5000)]) {
      expect(await grpcCode(client.listDocuments('kb', { pageToken }))).toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/page_token/) });
    }
  });

  it('keeps running, with earlier documents unaffected', async () => {
    const good = await client.getDocument('kb', goodId);
    expect(good.status).toBe('INDEX_STATUS_GRAPHED');
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'kb', query: 'Who wrote the first published algorithm?' });
    expect(chunks[0]?.documentId).toBe(goodId);
    expect((await fetch(`${server.httpUrl}/readyz`)).status).toBe(200);
  });
});
