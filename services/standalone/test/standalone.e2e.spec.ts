import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { uploadExamples, waitUntilIndexed } from './helpers';

describe('standalone end to end: examples/ over gRPC', () => {
  let server: StandaloneProcess;
  let client: TrellisClient;
  let documents: v1.Document[];

  beforeAll(async () => {
    server = await startStandaloneProcess();
    client = new TrellisClient({ address: server.grpcAddress });
    await client.createKnowledgeBase({ name: 'demo' });
    documents = await uploadExamples(client, 'demo');
    await waitUntilIndexed(client, 'demo', documents.map((d) => d.id));
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
  });

  it('indexes every example with all its chunks graphed', async () => {
    const listed = await client.listAllDocuments('demo');
    expect(listed).toHaveLength(5);
    for (const d of listed) {
      const total = d.chunkCounts.reduce((n, c) => n + c.count, 0);
      expect(total).toBeGreaterThan(0);
      expect(d.chunkCounts).toEqual([{ status: 'INDEX_STATUS_GRAPHED', count: total }]);
    }
  });

  it('shows for each document which stage it is in and how long each stage took', async () => {
    const polonium = documents.find((d) => d.sourceUri === 'examples/polonium.txt')!;
    const status = await client.getDocument('demo', polonium.id);
    expect(status.currentStage).toBe('done');
    expect(status.stages.map((s) => s.name)).toEqual(['ingestion', 'chunking', 'extraction', 'graph']);
    const chunks = status.chunkCounts.reduce((n, c) => n + c.count, 0);
    for (const stage of status.stages) {
      expect(stage.failures).toBe(0);
      expect(stage.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(stage.finishedAt)).toBeGreaterThanOrEqual(Date.parse(stage.startedAt));
    }
    expect(status.stages.find((s) => s.name === 'extraction')!.events).toBe(chunks);
    expect(Date.parse(status.stages[3]!.finishedAt)).toBeGreaterThanOrEqual(Date.parse(status.stages[0]!.startedAt));
  });

  it('builds the expected entities and relationships, with provenance', async () => {
    const graph = await client.exportGraph('demo');
    const names = graph.entities.map((e) => e.name);
    for (const expected of ['Marie Curie', 'Pierre Curie', 'Radium Institute', 'Poland', 'University of Paris', 'Claudius Regaud', 'Jacques Curie']) {
      expect(names).toContain(expected);
    }
    const edge = (source: string, label: string, target: string) =>
      graph.relationships.find((r) => r.sourceName === source && r.label === label && r.targetName === target);
    expect(edge('Marie Curie', 'named', 'Poland')).toBeDefined();
    expect(edge('Irène Joliot-Curie', 'directed', 'Radium Institute')).toBeDefined();
    expect(edge('Radium Institute', 'was founded in', 'Paris')).toBeDefined();
    const polonium = documents.find((d) => d.sourceUri === 'examples/polonium.txt')!;
    const named = edge('Marie Curie', 'named', 'Poland')!;
    const chunks = (await client.retrieveChunks({ knowledgeBase: 'demo', query: 'polonium Poland', mode: 'vector', topK: 10 })).chunks;
    const poloniumChunk = chunks.find((c) => c.documentId === polonium.id)!;
    expect(named.chunkIds).toContain(poloniumChunk.chunkId);

    const marie = await client.getEntity('demo', 'marie curie');
    expect(marie.entity?.name).toBe('Marie Curie');
    expect(marie.neighbours.map((n) => n.name)).toContain('Radium Institute');
  });

  it('Retrieve returns the chunk that answers a known question, with the graph context', async () => {
    const response = await client.retrieve({ knowledgeBase: 'demo', query: 'Who discovered piezoelectricity?', topK: 5 });
    const pierre = documents.find((d) => d.sourceUri === 'examples/pierre-curie.html')!;
    expect(response.chunks.slice(0, 3).map((c) => c.documentId)).toContain(pierre.id);
    const hit = response.chunks.find((c) => c.documentId === pierre.id)!;
    expect(hit.text).toContain('discovered piezoelectricity');
    expect(hit.signals.length).toBeGreaterThan(0);
    expect(response.graph?.relationships.length).toBeGreaterThan(0);
    expect(response.graph?.rendered).toContain('Relationships:');
  });

  it('the graph walk reaches the second hop of a multi-hop question', async () => {
    const graph = await client.retrieveGraph({
      knowledgeBase: 'demo',
      query: 'Which country was the element named after by the scientist who led the Radium Institute?',
      depth: 2,
    });
    const names = new Set(graph.entities.map((e) => e.name));
    expect(names.has('Radium Institute')).toBe(true);
    expect(names.has('Poland')).toBe(true);
    expect(graph.relationships.some((r) => r.hop > 0)).toBe(true);
  });

  it('streams a chat answer token by token that cites the answering document', async () => {
    const events: v1.ChatEvent[] = [];
    for await (const event of client.chat({ knowledgeBase: 'demo', question: 'Who discovered piezoelectricity?' })) events.push(event);
    const stages = events.filter((e) => e.stage).map((e) => e.stage!.name);
    expect(stages).toEqual(['graph_retrieval', 'refinement', 'chunk_retrieval', 'generation']);
    const tokens = events.filter((e) => e.token !== undefined);
    expect(tokens.length).toBeGreaterThan(5);
    const done = events.at(-1)!.done!;
    expect(done.text).toBe(tokens.map((t) => t.token).join(''));
    expect(done.text).toMatch(/piezoelectricity[^[]*\[\d+\]/);
    expect(done.citations.map((c) => c.sourceUri)).toContain('examples/pierre-curie.html');
    expect(events.filter((e) => e.citation).length).toBe(done.citations.length);

    const answer = await client.ask({ knowledgeBase: 'demo', question: 'Who discovered piezoelectricity?' });
    expect(answer.text).toBe(done.text);
  });

  it('searches several knowledge bases at once, fused, each text once', async () => {
    await client.createKnowledgeBase({ name: 'second' });
    const copy = await client.uploadDocument({ knowledgeBase: 'second', filename: 'polonium.txt', sourceUri: 'copy/polonium.txt' }, Buffer.from(
      'Polonium\n\nPolonium is a rare and highly radioactive chemical element with the symbol Po and atomic number 84.\nPolonium was discovered in 1898 by Marie Curie and Pierre Curie while they studied the ore pitchblende.\nMarie Curie named the element polonium after Poland, her native country, to draw attention to its lack of independence at the time.\nPolonium was the first element discovered by the Curies; radium followed a few months later.\n',
    ));
    const own = await client.uploadDocument({ knowledgeBase: 'second', filename: 'bismuth.txt' }, Buffer.from('Bismuth is a heavy element that sits next to polonium in the periodic table.'));
    await waitUntilIndexed(client, 'second', [copy.id, own.id]);
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'demo', additionalKnowledgeBases: ['second'], query: 'polonium element', topK: 10 });
    const kbs = new Set(chunks.map((c) => c.knowledgeBaseId));
    expect(kbs.size).toBe(2);
    expect(chunks.some((c) => c.sourceUri === 'bismuth.txt')).toBe(true);
    // The polonium passage is in both knowledge bases with the same text: returned once.
    expect(chunks.filter((c) => c.text.includes('named the element polonium after Poland')).length).toBe(1);
    await expect(client.retrieveChunks({ knowledgeBase: 'demo', additionalKnowledgeBases: ['missing'], query: 'x' })).rejects.toMatchObject({ code: 5 });
    const tooMany = Array.from({ length: 11 }, (_, i) => `kb${i}`);
    await expect(client.retrieveChunks({ knowledgeBase: 'demo', additionalKnowledgeBases: tooMany, query: 'x' })).rejects.toMatchObject({ code: 3 });
  });

  it('re-uploading identical content changes nothing', async () => {
    const before = await client.exportGraph('demo');
    const again = await uploadExamples(client, 'demo');
    expect(again.every((d) => d.unchanged)).toBe(true);
    const after = await client.exportGraph('demo');
    expect(after.relationships.length).toBe(before.relationships.length);
  });

  it('keeps its data across a restart', async () => {
    await server.stop();
    client.close();
    server = await startStandaloneProcess({ dataDir: server.dataDir });
    client = new TrellisClient({ address: server.grpcAddress });
    const listed = await client.listAllDocuments('demo');
    expect(listed.map((d) => d.status)).toEqual(Array(5).fill('INDEX_STATUS_GRAPHED'));
    const { chunks } = await client.retrieveChunks({ knowledgeBase: 'demo', query: 'piezoelectricity', mode: 'fulltext' });
    expect(chunks[0]?.sourceUri).toBe('examples/pierre-curie.html');
  });
});
