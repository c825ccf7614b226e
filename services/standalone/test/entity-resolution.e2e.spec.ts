import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { FakeOpenAiServer, fakeProviderEnv, startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { trellis, waitUntilIndexed } from './helpers';

interface Extraction {
  entities: Array<{ name: string; type: string; description: string }>;
  relationships: Array<{ source: string; target: string; label: string; description: string; strength: number }>;
}

/** What the fake LLM extracts from a chunk, chosen by a phrase of the chunk's text. */
const EXTRACTIONS: Array<[string, Extraction]> = [
  [
    'created by PingCAP',
    {
      entities: [
        { name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database created by PingCAP.' },
        { name: 'PingCAP', type: 'company', description: 'PingCAP is the company behind TiDB.' },
      ],
      relationships: [{ source: 'PingCAP', target: 'TiDB', label: 'created', description: 'PingCAP created TiDB.', strength: 9 }],
    },
  ],
  [
    'MySQL protocol',
    {
      entities: [
        { name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database that speaks the MySQL protocol.' },
        { name: 'MySQL', type: 'database', description: 'MySQL is the open source database whose wire protocol TiDB speaks.' },
      ],
      relationships: [{ source: 'TiDB', target: 'MySQL', label: 'is compatible with', description: 'TiDB is compatible with the MySQL protocol.', strength: 8 }],
    },
  ],
  [
    'analytical replicas',
    {
      entities: [
        { name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database that keeps analytical replicas in TiFlash.' },
        { name: 'TiFlash', type: 'storage engine', description: 'TiFlash is the columnar storage engine of TiDB.' },
      ],
      relationships: [{ source: 'TiDB', target: 'TiFlash', label: 'replicates to', description: 'TiDB keeps analytical replicas in TiFlash.', strength: 7 }],
    },
  ],
  [
    'scales out',
    {
      entities: [{ name: 'TiDB', type: 'database', description: 'TiDB is a distributed SQL database that scales out by adding nodes, with strong consistency and high availability.' }],
      relationships: [],
    },
  ],
  [
    'smallest planet',
    {
      entities: [{ name: 'Mercury', type: 'planet', description: 'Mercury is the smallest planet of the solar system and the closest to the Sun.' }],
      relationships: [],
    },
  ],
  [
    'heavy metal',
    {
      entities: [{ name: 'Mercury', type: 'chemical element', description: 'Mercury is a toxic heavy metal, liquid at room temperature, symbol Hg.' }],
      relationships: [],
    },
  ],
];

const DOCS = {
  tidbA: ['tidb-a.txt', 'TiDB is a distributed SQL database created by PingCAP.'],
  tidbB: ['tidb-b.txt', 'TiDB is a distributed SQL database that speaks the MySQL protocol.'],
  planet: ['planet.txt', 'Mercury is the smallest planet of the solar system.'],
  element: ['element.txt', 'Mercury is a toxic heavy metal, liquid at room temperature.'],
} as const;
const TIDB_B_EDITED = 'TiDB is a distributed SQL database that keeps analytical replicas in TiFlash.';

function lastUserMessage(request: Record<string, unknown>): string {
  const messages = request.messages as Array<{ role: string; content: string }>;
  return messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';
}

describe('entity resolution and document lifecycle (standalone, fake OpenAI-compatible server)', () => {
  const fake = new FakeOpenAiServer(256);
  let server: StandaloneProcess;
  let client: TrellisClient;
  const ids: Record<string, string> = {};

  const extractionCalls = () => fake.chatRequests().filter((r) => r.body.response_format !== undefined).length;
  const named = (graph: v1.Subgraph, name: string) => graph.entities.filter((e) => e.name === name);
  const upload = async (key: keyof typeof DOCS, text: string = DOCS[key][1]) => {
    const doc = await client.uploadDocument({ knowledgeBase: 'quality', filename: DOCS[key][0] }, Buffer.from(text));
    ids[key] = doc.id;
    return doc;
  };

  beforeAll(async () => {
    fake.respondWith((request) => {
      const text = lastUserMessage(request);
      if (request.response_format) {
        const match = EXTRACTIONS.find(([phrase]) => text.includes(phrase));
        return { kind: 'content', content: JSON.stringify(match?.[1] ?? { entities: [], relationships: [] }) };
      }
      const system = (request.messages as Array<{ role: string; content: string }>)[0]?.content ?? '';
      if (system.includes('same real-world thing')) return { kind: 'content', content: 'Sure: {"same": true}' };
      if (system.includes('single factual summary')) return { kind: 'content', content: 'TiDB: an LLM-written summary of a distributed SQL database.' };
      return { kind: 'content', content: 'ok' };
    });
    const baseUrl = await fake.start();
    server = await startStandaloneProcess({
      env: fakeProviderEnv(baseUrl, 256),
    });
    client = new TrellisClient({ address: server.grpcAddress });
    const kb = await client.createKnowledgeBase({ name: 'quality', resolution: { mode: '', similarityThreshold: 0, llmMergeDecisions: '', llmMergeFloor: 0, summaryMaxChars: 0 } });
    expect(kb.resolution).toMatchObject({ mode: '', similarityThreshold: 0 });
    const docs = [await upload('tidbA'), await upload('tidbB'), await upload('planet'), await upload('element')];
    await waitUntilIndexed(client, 'quality', docs.map((d) => d.id));
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await fake.stop();
  });

  it('resolves TiDB described in two documents to one entity and keeps the two Mercurys apart', async () => {
    const graph = await client.exportGraph('quality');
    const tidb = named(graph, 'TiDB');
    expect(tidb).toHaveLength(1);
    expect(tidb[0]!.mentionCount).toBe(2);
    expect(tidb[0]!.description).toContain('created by PingCAP');
    expect(tidb[0]!.description).toContain('MySQL protocol');
    const mercury = named(graph, 'Mercury');
    expect(mercury).toHaveLength(2);
    expect(mercury.map((m) => m.type).sort()).toEqual(['chemical element', 'planet']);
    expect(mercury.find((m) => m.type === 'planet')!.description).not.toContain('metal');
    expect(mercury.find((m) => m.type === 'chemical element')!.description).not.toContain('planet');
    // Merge decisions are off by default and summaries are short: the LLM only extracted.
    expect(fake.chatRequests().length).toBe(extractionCalls());
  });

  it('re-ingesting an edited document removes its old facts and their description text', async () => {
    const edited = await upload('tidbB', TIDB_B_EDITED);
    expect(edited.version).toBe(2);
    await waitUntilIndexed(client, 'quality', [edited.id]);
    const graph = await client.exportGraph('quality');
    const [tidb] = named(graph, 'TiDB');
    expect(tidb!.mentionCount).toBe(2);
    expect(tidb!.description).toContain('analytical replicas in TiFlash');
    expect(JSON.stringify(graph)).not.toMatch(/MySQL/);
    expect(named(graph, 'MySQL')).toEqual([]);
    expect(graph.relationships.map((r) => r.label).sort()).toEqual(['created', 'replicates to']);
  });

  it('re-indexes a document and the whole knowledge base from the stored text, reusing cached extractions', async () => {
    const before = await client.exportGraph('quality');
    const calls = extractionCalls();
    const reindexed = await client.reindexDocument('quality', ids.tidbA!);
    expect(reindexed.version).toBe(2);
    await waitUntilIndexed(client, 'quality', [reindexed.id]);
    const { documents } = await client.reindexKnowledgeBase('quality');
    expect(documents.map((d) => d.filename).sort()).toEqual(['element.txt', 'planet.txt', 'tidb-a.txt', 'tidb-b.txt']);
    await waitUntilIndexed(client, 'quality', documents.map((d) => d.id));
    expect(extractionCalls()).toBe(calls);
    const after = await client.exportGraph('quality');
    // Summaries list descriptions in chunk id order, and new versions have new chunk ids.
    const sentences = (text: string) => text.split(/(?<=\.) /).sort().join(' ');
    const shape = (g: v1.Subgraph) => ({
      entities: g.entities.map((e) => `${e.id}|${e.name}|${e.type}|${e.mentionCount}|${sentences(e.description)}`).sort(),
      relationships: g.relationships.map((r) => `${r.id}|${r.label}|${r.weight}|${r.chunkIds.length}`).sort(),
    });
    expect(shape(after)).toEqual(shape(before));
    // The old versions' chunks are gone: every relationship is stated by exactly one current chunk.
    const listed = await client.listDocuments('quality');
    expect(listed.documents.every((d) => d.version >= 2)).toBe(true);
  });

  it('trellis reindex starts a new version of one document and follows it until indexed', async () => {
    const calls = extractionCalls();
    const { stdout, code } = await trellis(['--server', server.grpcAddress, 'reindex', 'quality', ids.element!]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/element\.txt\s+version 3/);
    expect(stdout).toMatch(/indexed 1 document/);
    expect(extractionCalls()).toBe(calls);
    expect(named(await client.exportGraph('quality'), 'Mercury')).toHaveLength(2);
  });

  it("follows a knowledge base's own settings: LLM merge decisions in the close band, LLM summaries past its limit", async () => {
    const created = await trellis(['--server', server.grpcAddress, 'kb', 'create', 'strict', '--resolution', 'embedding', '--similarity-threshold', '0.95', '--llm-merge', 'on', '--summary-max-chars', '200']);
    expect(created.code).toBe(0);
    const chats = () => fake.chatRequests().map((r) => (r.body.messages as Array<{ content: string }>)[0]?.content ?? '');
    const before = chats().length;
    const docs = [];
    const scales = 'TiDB is a distributed SQL database that scales out by adding nodes.';
    for (const text of [DOCS.tidbA[1], DOCS.tidbB[1], scales, DOCS.planet[1], DOCS.element[1]]) {
      docs.push(await client.uploadDocument({ knowledgeBase: 'strict', filename: `${docs.length}.txt` }, Buffer.from(text)));
    }
    await waitUntilIndexed(client, 'strict', docs.map((d) => d.id));
    const asked = chats().slice(before);
    // TiDB descriptions are about 0.7 alike: below 0.95, so the LLM was asked, and said "same".
    expect(asked.filter((c) => c.includes('same real-world thing')).length).toBeGreaterThanOrEqual(2);
    const graph = await client.exportGraph('strict');
    const tidb = named(graph, 'TiDB');
    expect(tidb).toHaveLength(1);
    expect(tidb[0]!.mentionCount).toBe(3);
    // Together the three descriptions pass 200 characters: the LLM condensed them.
    expect(tidb[0]!.description).toBe('TiDB: an LLM-written summary of a distributed SQL database.');
    expect(asked.some((c) => c.includes('single factual summary'))).toBe(true);
    // Every call is on the bill: extraction, merge decisions and summaries, per document and for the KB.
    const perDocument = await Promise.all(docs.map(async (d) => (await client.getDocument('strict', d.id)).llmUsage?.calls ?? 0));
    expect(perDocument.reduce((a, b) => a + b, 0)).toBe(asked.length);
    expect((await client.getKnowledgeBase('strict')).llmUsage?.calls).toBe(asked.length);
    // The Mercurys are too far apart (below the floor) to ask about.
    expect(named(graph, 'Mercury')).toHaveLength(2);
    expect(asked.filter((c) => c.includes('same real-world thing')).length).toBeLessThanOrEqual(2);
    const settings = (await client.getKnowledgeBase('strict')).resolution;
    expect(settings).toMatchObject({ mode: 'embedding', llmMergeDecisions: 'on', llmMergeFloor: 0, summaryMaxChars: 200 });
    expect(settings!.similarityThreshold).toBeCloseTo(0.95, 5);
  });

  it('deleting a document leaves no entity, relationship or description text of it behind', async () => {
    await client.deleteDocument('quality', ids.planet!);
    await client.deleteDocument('quality', ids.tidbA!);
    const graph = await client.exportGraph('quality');
    expect(named(graph, 'Mercury').map((m) => m.type)).toEqual(['chemical element']);
    expect(named(graph, 'PingCAP')).toEqual([]);
    expect(named(graph, 'TiDB')[0]!.mentionCount).toBe(1);
    expect(JSON.stringify(graph)).not.toMatch(/smallest planet|PingCAP/);
    expect(graph.relationships.map((r) => r.label)).toEqual(['replicates to']);
    const entityIds = new Set(graph.entities.map((e) => e.id));
    expect(graph.relationships.every((r) => entityIds.has(r.sourceEntityId) && entityIds.has(r.targetEntityId))).toBe(true);
  });
});
