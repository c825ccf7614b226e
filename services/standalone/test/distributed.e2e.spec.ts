import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { DistributedDeployment, startStandaloneProcess } from '@trellis/testing';
import { describeWithInfra } from '@trellis/testing/suites';
import { sample, uploadExamples, waitUntilIndexed } from './helpers';

const kafkaBrokers = process.env.TRELLIS_TEST_KAFKA_BROKERS;
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;

/** What must be identical between two deployments that indexed the same documents. */
function graphShape(graph: v1.Subgraph) {
  return {
    entities: graph.entities.map((e) => `${e.name}|${e.type}|${e.mentionCount}|${e.description}`).sort(),
    relationships: graph.relationships.map((r) => `${r.sourceName}|${r.label}|${r.targetName}|${r.weight}|${r.chunkIds.length}`).sort(),
  };
}

const QUESTIONS = ['Who discovered piezoelectricity?', 'Which element was named after Poland?', 'Who directed the Radium Institute?'];

describeWithInfra('distributed end to end: six processes on Kafka and the SQL store', { kafka: true, mysql: true }, () => {
  let deployment: DistributedDeployment;
  let client: TrellisClient;
  let standalone: { graph: v1.Subgraph; answers: v1.Answer[] };

  beforeAll(async () => {
    // The reference: the same documents through standalone.
    const reference = await startStandaloneProcess();
    const local = new TrellisClient({ address: reference.grpcAddress });
    try {
      await local.createKnowledgeBase({ name: 'demo' });
      const docs = await uploadExamples(local, 'demo');
      await waitUntilIndexed(local, 'demo', docs.map((d) => d.id));
      standalone = {
        graph: await local.exportGraph('demo'),
        answers: await Promise.all(QUESTIONS.map((question) => local.ask({ knowledgeBase: 'demo', question }))),
      };
    } finally {
      local.close();
      await reference.dispose();
    }

    deployment = new DistributedDeployment({ kafkaBrokers: kafkaBrokers!, mysqlUrl: mysqlUrl!, runId: randomBytes(4).toString('hex') });
    deployment.prepare();
    await deployment.startAll();
    client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses() });
  }, 240_000);

  afterAll(async () => {
    client?.close();
    await deployment?.tearDown();
  });

  it('ingests examples/ over gRPC into the same graph as standalone', async () => {
    await client.createKnowledgeBase({ name: 'demo' });
    const docs = await uploadExamples(client, 'demo');
    await waitUntilIndexed(client, 'demo', docs.map((d) => d.id), 120_000);
    const graph = await client.exportGraph('demo');
    expect(graph.entities.length).toBeGreaterThan(20);
    expect(graphShape(graph)).toEqual(graphShape(standalone.graph));
  });

  // Full-text ranking differs by design between the adapters (SQLite FTS5 with Porter
  // stemming; an inverted index in TiDB/MySQL with a light stemmer and per-KB statistics), so
  // lower-ranked sources may differ; the answer itself must not.
  it('answers like standalone: same leading sentence, citing the same source', async () => {
    for (const [i, question] of QUESTIONS.entries()) {
      const answer = await client.ask({ knowledgeBase: 'demo', question });
      const expected = standalone.answers[i]!;
      // Source numbers follow each deployment's ranking; compare the words.
      const lead = (text: string) => text.split(/(?<=\]) /)[0]!.replace(/\[\d+\]/g, "[n]");
      expect(lead(answer.text)).toBe(lead(expected.text));
      expect(answer.citations[0]?.sourceUri).toBe(expected.citations[0]?.sourceUri);
    }
  });

  it('asks retrieval once per chat turn: one Retrieve call, no RetrieveGraph or RetrieveChunks', async () => {
    const retrieval = deployment.processes.get('retrieval')!;
    const calls = async () => {
      const scrape = await (await fetch(`http://127.0.0.1:${retrieval.httpPort}/metrics`)).text();
      return Object.fromEntries(['Retrieve', 'RetrieveGraph', 'RetrieveChunks'].map((method) => [method, sample(scrape, 'trellis_grpc_requests_total', { method })]));
    };
    const before = await calls();
    for (const question of QUESTIONS) await client.ask({ knowledgeBase: 'demo', question });
    const streamed: v1.ChatEvent[] = [];
    for await (const event of client.chat({ knowledgeBase: 'demo', question: QUESTIONS[0]! })) streamed.push(event);
    expect(streamed.at(-1)?.done?.citations.length).toBeGreaterThan(0);
    const after = await calls();
    expect(after.Retrieve! - before.Retrieve!).toBe(QUESTIONS.length + 1);
    expect(after.RetrieveGraph).toBe(before.RetrieveGraph);
    expect(after.RetrieveChunks).toBe(before.RetrieveChunks);
  });

  it('is ready only while its database and broker answer, and serves metrics', async () => {
    const ingestion = deployment.processes.get('ingestion')!;
    expect((await fetch(`http://127.0.0.1:${ingestion.httpPort}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${ingestion.httpPort}/metrics`)).text();
    expect(metrics).toContain('trellis_process_resident_memory_bytes');
    const graphStore = deployment.processes.get('graph-store')!;
    const consumerMetrics = await (await fetch(`http://127.0.0.1:${graphStore.httpPort}/metrics`)).text();
    expect(consumerMetrics).toMatch(/trellis_events_handled_total\{[^}]*topic="chunk.extracted"[^}]*outcome="ok"[^}]*\} [1-9]/);
  });
});
