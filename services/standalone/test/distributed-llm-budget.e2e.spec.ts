import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment, FakeOpenAiServer } from '@trellis/testing';
import { describeWithInfra } from '@trellis/testing/suites';
import { uploadExamples, waitUntilIndexed } from './helpers';

const kafkaBrokers = process.env.TRELLIS_TEST_KAFKA_BROKERS;
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;

/**
 * The LLM concurrency limit holds for the deployment, not per process: two extraction
 * processes, each consuming two partitions at once, share one slot kept in the SQL store.
 */
describeWithInfra('distributed: one LLM call budget for every extraction process', { kafka: true, mysql: true }, () => {
  const fake = new FakeOpenAiServer(64);
  let deployment: DistributedDeployment;
  let client: TrellisClient;

  beforeAll(async () => {
    // Every extraction call takes a while, so calls from different workers would overlap.
    fake.respondWith(() => ({ kind: 'content', delayMs: 150, content: JSON.stringify({ entities: [{ name: 'Marie Curie', type: 'person', description: 'Physicist.', attributes: [] }], relationships: [] }) }));
    const baseUrl = await fake.start();
    deployment = new DistributedDeployment({
      kafkaBrokers: kafkaBrokers!,
      mysqlUrl: mysqlUrl!,
      runId: randomBytes(4).toString('hex'),
      extraEnv: {
        OPENAI_BASE_URL: baseUrl,
        OPENAI_API_KEY: 'test',
        TRELLIS_LLM_MODEL: 'fake-model',
        TRELLIS_EMBEDDING_MODEL: 'fake-embed',
        TRELLIS_EMBEDDING_DIMENSIONS: '64',
        TRELLIS_LLM_MAX_CONCURRENCY: '1',
        TRELLIS_KAFKA_CONCURRENCY: '2',
      },
    });
    deployment.prepare();
    await deployment.startAll();
    await deployment.startReplica('extraction');
    client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses() });
  }, 240_000);

  afterAll(async () => {
    client?.close();
    await deployment?.tearDown();
    await fake.stop();
  });

  it('never has more than one extraction call in flight, and indexes everything', async () => {
    await client.createKnowledgeBase({ name: 'budget' });
    const docs = await uploadExamples(client, 'budget');
    const indexed = await waitUntilIndexed(client, 'budget', docs.map((d) => d.id), 180_000);
    const chunks = indexed.reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0);
    const extractionCalls = fake.chatRequests().filter((r) => r.body.response_format !== undefined).length;
    expect(chunks).toBeGreaterThan(4);
    expect(extractionCalls).toBeGreaterThanOrEqual(chunks - 1);
    expect(fake.maxChatInFlight).toBe(1);
    const usage = (await client.getKnowledgeBase('budget')).llmUsage!;
    expect(usage.calls + usage.cacheHits).toBeGreaterThanOrEqual(chunks);
  });
});
