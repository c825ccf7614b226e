import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '@grpc/grpc-js';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { startStandaloneProcess, waitFor } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { grpcCode, sample, trellis, waitUntilIndexed } from './helpers';

const TOPICS: Record<string, string> = {
  'databases.txt': 'TiDB is a distributed SQL database built by PingCAP. TiDB stores its data in TiKV. PingCAP also develops TiFlash, a columnar engine for TiDB. TiDB speaks the MySQL protocol.',
  'astronomy.txt': 'Galileo Galilei taught in Padua. Galileo Galilei observed Jupiter. Johannes Kepler wrote to Galileo Galilei from Prague. Johannes Kepler worked in Prague.',
  'composers.txt': 'Johann Sebastian Bach worked in Leipzig. George Frideric Handel worked in London. Bach and Handel were born in Germany in 1685. Georg Philipp Telemann knew Bach and Handel.',
};
const ASTRONOMY = /Galileo|Kepler|Jupiter|Padua|Prague|Pisa/;

/**
 * Communities on the standalone server without a language model (extractive reports): built on
 * request, listed and shown over gRPC and the CLI, used by global search and automatic routing,
 * and refreshed by themselves after a document changes — only the communities it touched.
 */
describe('standalone end to end: communities', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  const kb = 'topics';
  const cli = (...args: string[]) => trellis(['--server', server.grpcAddress, ...args]);
  const upload = (name: string, text: string) => client.uploadDocument({ knowledgeBase: kb, filename: name, sourceUri: `topics/${name}` }, Buffer.from(text));

  beforeAll(async () => {
    server = await startStandaloneProcess();
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: kb });
    const documents = [];
    for (const [name, text] of Object.entries(TOPICS)) documents.push(await upload(name, text));
    await waitUntilIndexed(client, kb, documents.map((d) => d.id));
  }, 120_000);

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  const membersOf = async (c: v1.Community) => (await client.getCommunity(kb, c.id)).members.map((m) => m.name).join(' ');

  it('builds on request, then lists and shows communities over gRPC and the CLI, with sources, and routes corpus-wide questions global', async () => {
    expect((await client.listCommunities(kb)).communities).toEqual([]);
    expect((await cli('communities', kb)).stdout).toContain(`no communities yet: build them with \`trellis communities rebuild ${kb}\``);
    const rebuilt = await cli('communities', 'rebuild', kb);
    expect(rebuilt).toMatchObject({ code: 0, stdout: expect.stringMatching(/^rebuilt: \d+ communities in \d levels/) });

    const list = await client.listCommunities(kb);
    expect(list.communities.length).toBeGreaterThanOrEqual(3);
    expect(list.communities.every((c) => !c.stale && c.reportKind === 'extractive' && c.size >= 2)).toBe(true);
    expect(list.refreshedAt).not.toBe('');
    const shown = await cli('communities', kb);
    expect(shown.stdout).toMatch(/LEVEL\s+SIZE\s+STALE\s+REPORT\s+ID\s+TITLE/);
    for (const c of list.communities) expect(shown.stdout).toContain(c.title);

    const astronomy = (await Promise.all(list.communities.map(async (c) => ((await membersOf(c)).match(ASTRONOMY) ? c : null)))).find((c) => c !== null)!;
    const detail = await client.getCommunity(kb, astronomy.id);
    expect(detail.keyFacts.length).toBeGreaterThan(0);
    expect(detail.keyFacts.every((f) => f.chunkIds.length > 0 && f.relationshipId !== '')).toBe(true);
    expect((await cli('communities', 'show', kb, astronomy.id)).stdout).toContain('Key facts:');
    expect((await grpcCode(client.getCommunity(kb, 'community_unknown'))).code).toBe(status.NOT_FOUND);
    expect((await grpcCode(client.listCommunities('no-such-kb'))).code).toBe(status.NOT_FOUND);

    const routed = await client.retrieve({ knowledgeBase: kb, query: 'What are the main themes of these documents?', topK: 3, scope: 'auto' });
    expect(routed).toMatchObject({ route: 'global', routeReason: 'corpus-wide cue "main themes"' });
    expect(routed.communities.length).toBe(3);
    const local = await client.retrieve({ knowledgeBase: kb, query: 'Where did Galileo Galilei teach?', topK: 3, scope: 'auto' });
    expect(local.route).toBe('local');
    const answer = await client.ask({ knowledgeBase: kb, question: 'What are the main themes across all documents?', scope: 'auto' });
    expect(answer.route).toBe('global');
    expect(answer.citations.length).toBeGreaterThan(0);
    expect(answer.citations.every((c) => c.communityId !== '' && c.sourceChunkIds.length > 0)).toBe(true);

    const scrape = await (await fetch(`${server.httpUrl}/metrics`)).text();
    expect(sample(scrape, 'trellis_communities')).toBe(list.communities.length);
    expect(sample(scrape, 'trellis_communities_stale')).toBe(0);
  });

  it('refreshes by itself after a document changes, recomputing only the communities it touched', async () => {
    const before = await client.listCommunities(kb);
    const touched = new Set<string>();
    for (const c of before.communities) if ((await membersOf(c)).match(ASTRONOMY)) touched.add(c.id);
    const changed = await upload('astronomy.txt', `${TOPICS['astronomy.txt']} Galileo Galilei was born in Pisa.`);
    await waitUntilIndexed(client, kb, [changed.id]);
    const after = await waitFor(
      async () => {
        const list = await client.listCommunities(kb);
        return list.refreshedAt > list.changedAt && list.refreshedAt > before.refreshedAt && list.communities.every((c) => !c.stale) ? list : undefined;
      },
      60_000,
      'the automatic community refresh',
    );
    const untouched = before.communities.filter((c) => !touched.has(c.id));
    expect(untouched.length).toBeGreaterThan(0);
    for (const c of untouched) expect(after.communities).toContainEqual(c);
    const fresh = after.communities.filter((c) => !before.communities.some((b) => b.id === c.id && b.updatedAt === c.updatedAt));
    expect(fresh.length).toBeGreaterThan(0);
    for (const c of fresh) expect(await membersOf(c)).toMatch(ASTRONOMY);
    expect(touched.size).toBeGreaterThan(0);
  }, 120_000);
});
