import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { BAD_INPUT_CASES } from './bad-input-cases';
import type { BadInputContext } from './bad-input-cases';
import { grpcCode, waitUntilIndexed } from './helpers';

const LIMIT = 2_000_000;
/** A case that takes longer than this has hung the server as far as a client can tell. */
const CASE_TIMEOUT_MS = 30_000;

/**
 * The bad-input corpus (bad-input-cases.ts) against one standalone server: every case gets its
 * specific status and a message saying what is wrong, none INTERNAL or UNKNOWN, none hangs; the
 * server stays up and the document indexed before is intact. Prints the table.
 */
describe('standalone: the bad-input corpus', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  let context: BadInputContext;
  const results: Array<{ name: string; code: string; details: string }> = [];

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: { TRELLIS_MAX_UPLOAD_BYTES: String(LIMIT), TRELLIS_EMBEDDINGS: 'hash' } });
    client = new TrellisClient({ address: server.grpcAddress, timeoutMs: CASE_TIMEOUT_MS });
    await client.createKnowledgeBase({ name: 'corpus' });
    const good = await client.uploadDocument(
      { knowledgeBase: 'corpus', filename: 'lovelace.txt' },
      Buffer.from('Ada Lovelace wrote the first published algorithm for the Analytical Engine of Charles Babbage.'),
    );
    await waitUntilIndexed(client, 'corpus', [good.id]);
    const graph = await client.exportGraph('corpus');
    context = {
      client,
      kb: 'corpus',
      documentId: good.id,
      entityId: graph.entities[0]!.id,
      relationshipId: graph.relationships[0]!.id,
      uploadLimit: LIMIT,
      httpUrl: server.httpUrl,
    };
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  it(`has at least 40 cases (${BAD_INPUT_CASES.length})`, () => {
    expect(BAD_INPUT_CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(BAD_INPUT_CASES.map((c) => c.name)).size).toBe(BAD_INPUT_CASES.length);
  });

  it.each(BAD_INPUT_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const error = await grpcCode(c.call(context));
    results.push({ name: c.name, code: status[error.code] ?? String(error.code), details: error.details });
    expect(error.code, error.details).not.toBe(status.INTERNAL);
    expect(error.code, error.details).not.toBe(status.UNKNOWN);
    expect({ code: status[error.code], details: error.details }).toMatchObject({ code: status[c.code], details: expect.stringMatching(c.says) });
  }, CASE_TIMEOUT_MS + 5_000);

  it('is still up afterwards, with the document indexed before intact and found', async () => {
    expect((await fetch(`${server.httpUrl}/readyz`)).status).toBe(200);
    expect((await client.getDocument('corpus', context.documentId)).status).toBe('INDEX_STATUS_GRAPHED');
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'corpus', query: 'first published algorithm', mode: 'fulltext' });
    expect(chunks[0]?.documentId).toBe(context.documentId);
    console.log(
      ['| case | status | message |', '| --- | --- | --- |', ...results.map((r) => `| ${r.name} | ${r.code} | ${r.details.replace(/\|/g, '\\|').slice(0, 140)} |`)].join('\n'),
    );
  });
});
