import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { status } from '@grpc/grpc-js';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment, freePort, startStandaloneProcess, waitFor } from '@trellis/testing';
import { drillOutcome, drillTable } from './drill-outcomes';
import { grpcCode, waitUntilIndexed } from './helpers';

const ROOT = resolve(__dirname, '../../..');
/** 340 HotpotQA passages kept in the repository (datasets/drill-corpus/README.md): the drills run on a clean clone. */
const CORPUS = resolve(ROOT, 'datasets/drill-corpus/corpus.jsonl');
const enabled = Boolean(process.env.TRELLIS_TEST_KAFKA_BROKERS && process.env.TRELLIS_TEST_MYSQL_URL);

/**
 * Failure drills need a broker and a database they can stop and kill without disturbing the
 * rest of the suite, so this file starts its own on free ports with the project's scripts.
 */
class PrivateInfra {
  readonly dir = mkdtempSync(join(tmpdir(), 'trellis-drill-'));
  kafkaPort = 0;
  private kafkaEnv: Record<string, string> = {};
  private dbEnv: Record<string, string> = {};
  dbPort = 0;

  async start(): Promise<void> {
    this.kafkaPort = await freePort();
    this.dbPort = await freePort();
    this.kafkaEnv = { KAFKA_PORT: String(this.kafkaPort), KAFKA_CONTROLLER_PORT: String(await freePort()), KAFKA_DATA_DIR: join(this.dir, 'kafka') };
    this.dbEnv = { MARIADB_PORT: String(this.dbPort), MARIADB_DATA_DIR: join(this.dir, 'mariadb') };
    this.kafka('start');
    this.mariadb('start');
  }

  kafka(command: 'start' | 'stop'): void {
    execFileSync('bash', [join(ROOT, 'deploy/local/kafka.sh'), command], { env: { ...process.env, ...this.kafkaEnv }, stdio: 'pipe' });
  }

  mariadb(command: 'start' | 'stop'): void {
    execFileSync('bash', [join(ROOT, 'deploy/local/mariadb.sh'), command], { env: { ...process.env, ...this.dbEnv }, stdio: 'pipe' });
  }

  stop(): void {
    for (const stop of [() => this.kafka('stop'), () => this.mariadb('stop')]) {
      try {
        stop();
      } catch {
        // already stopped
      }
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function passages(from: number, count: number): Array<{ id: string; title: string; text: string }> {
  return readFileSync(CORPUS, 'utf8').split('\n').filter(Boolean).slice(from, from + count).map((l) => JSON.parse(l) as { id: string; title: string; text: string });
}

/** Passages of the drill corpus each kill drill indexes (the first 340 are shared out below). */
const SERVICE_SLICES = { chunking: 160, 'graph-store': 200, ingestion: 40, query: 100 } as const;

/**
 * A client's channel to a restarted service fails fast until its reconnect backoff ends, as
 * any caller sees it: retry until the service answers.
 */
async function answeringAgain(call: () => Promise<unknown>, service: string): Promise<void> {
  await waitFor(async () => call().then(() => true, () => false), 60_000, `${service} to answer again`);
}

async function upload(client: TrellisClient, kb: string, items: ReturnType<typeof passages>): Promise<string[]> {
  const ids: string[] = [];
  for (const p of items) ids.push((await client.uploadDocument({ knowledgeBase: kb, filename: `${p.id}.txt`, sourceUri: p.id }, Buffer.from(`${p.title}\n${p.text}`))).id);
  return ids;
}

/** The outbox counter `name` summed over every process, for the events published (or not) `by` the stage or the relay. */
async function outboxCount(deployment: DistributedDeployment, name: 'published' | 'publish_failures', by: 'stage' | 'relay'): Promise<number> {
  let total = 0;
  for (const service of [...deployment.processes.values()]) {
    const metrics = await (await fetch(`http://127.0.0.1:${service.httpPort}/metrics`)).text();
    const line = metrics.split('\n').find((l) => l.startsWith(`trellis_outbox_${name}_total{`) && l.includes(`by="${by}"`));
    total += line === undefined ? 0 : Number(line.split(' ').pop());
  }
  return total;
}

async function graphedChunks(client: TrellisClient, kb: string): Promise<number> {
  const documents = await client.listAllDocuments(kb);
  return documents.reduce((n, d) => n + d.chunkCounts.filter((c) => c.status === 'INDEX_STATUS_GRAPHED').reduce((m, c) => m + c.count, 0), 0);
}

if (!enabled) {
  describe('distributed failure drills', () => {
    it('needs TRELLIS_TEST_KAFKA_BROKERS and TRELLIS_TEST_MYSQL_URL', () => {
      expect.fail('set TRELLIS_TEST_KAFKA_BROKERS and TRELLIS_TEST_MYSQL_URL (npm test starts Kafka and MariaDB and sets them): a drill that cannot run fails');
    });
  });
} else describe('distributed failure drills (private Kafka and database)', () => {
  const infra = new PrivateInfra();
  let deployment: DistributedDeployment;
  let client: TrellisClient;
  /** Each drill's knowledge base and passages, compared with a clean run at the end. */
  const drills: Array<{ drill: string; kb: string; passages: ReturnType<typeof passages> }> = [];

  beforeAll(async () => {
    await infra.start();
    deployment = new DistributedDeployment({
      kafkaBrokers: `127.0.0.1:${infra.kafkaPort}`,
      mysqlUrl: `mysql://root@127.0.0.1:${infra.dbPort}/`,
      runId: randomBytes(4).toString('hex'),
      // The drills are about delivery (kills, restarts, poison messages), not about meaning: hash
      // embeddings keep six processes from each loading and running the model on two cores.
      // A short publish timeout keeps uploads during a broker outage quick; the relay takes over after 5 s.
      extraEnv: {
        TRELLIS_KAFKA_SESSION_TIMEOUT_MS: '8000',
        TRELLIS_KAFKA_CONCURRENCY: '4',
        TRELLIS_EMBEDDINGS: 'hash',
        TRELLIS_OUTBOX_PUBLISH_TIMEOUT_MS: '1000',
        TRELLIS_OUTBOX_RELAY_AFTER_MS: '5000',
      },
    });
    deployment.prepare();
    await deployment.startAll();
    client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses(), timeoutMs: 60_000 });
  }, 300_000);

  // A drill that failed on a busy machine is hard to run again as it was: its services' warnings say what they saw.
  afterEach(({ task }) => {
    if (task.result?.state === 'fail') console.log(`warnings of the services after "${task.name}":\n${deployment?.warnings()}`);
  });

  afterAll(async () => {
    client?.close();
    // The private broker and database go as a whole.
    await deployment?.stopAll();
    infra.stop();
  }, 120_000);

  it('kill -9 of extraction with 240 chunks in flight: every chunk ends up in the graph exactly once', async () => {
    const corpus = passages(0, 240);
    await client.createKnowledgeBase({ name: 'crash' });
    const ids = await upload(client, 'crash', corpus);
    await waitFor(async () => (await graphedChunks(client, 'crash')) >= 20, 120_000, '20 chunks graphed');
    await deployment.kill('extraction');
    const graphedAtKill = await graphedChunks(client, 'crash');
    expect(graphedAtKill).toBeLessThan(240);
    await deployment.start('extraction');
    const documents = await waitUntilIndexed(client, 'crash', ids, 240_000);
    const total = documents.reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0);
    expect(total).toBeGreaterThanOrEqual(240);
    expect(await graphedChunks(client, 'crash')).toBe(total);

    drills.push({ drill: 'kill -9 extraction', kb: 'crash', passages: corpus });
  }, 600_000);

  it('a broker restart in the middle of an ingest loses nothing', async () => {
    await client.createKnowledgeBase({ name: 'restart' });
    const corpus = passages(240, 60);
    drills.push({ drill: 'broker stop/start', kb: 'restart', passages: corpus });
    const ids = await upload(client, 'restart', corpus);
    infra.kafka('stop');
    await new Promise((r) => setTimeout(r, 2_000));
    infra.kafka('start');
    await waitUntilIndexed(client, 'restart', ids, 240_000);
    expect(await graphedChunks(client, 'restart')).toBeGreaterThanOrEqual(60);
  }, 400_000);

  it('uploads while the broker is down are accepted, and indexed once it is back: the outbox relays the events that never reached it', async () => {
    const kb = 'broker-down';
    const corpus = passages(240, 20);
    drills.push({ drill: 'uploads with the broker down', kb, passages: corpus });
    await client.createKnowledgeBase({ name: kb });
    const failedBefore = await outboxCount(deployment, 'publish_failures', 'stage');
    infra.kafka('stop');
    // Each write commits with its event in the outbox; the upload stops waiting for the publish after its timeout.
    const ids = await upload(client, kb, corpus);
    // The broker comes back only once every upload's publish has run out of the producer's retries:
    // a publish still retrying would deliver its event itself, and the relay would have nothing to do.
    await waitFor(async () => (await outboxCount(deployment, 'publish_failures', 'stage')) - failedBefore >= corpus.length, 120_000, 'every upload publish given up');
    const pending = await client.listAllDocuments(kb);
    expect(pending.filter((d) => d.status === 'INDEX_STATUS_PENDING')).toHaveLength(corpus.length);
    infra.kafka('start');
    // The sweeper waits TRELLIS_STUCK_AFTER_MS (10 minutes): only the relay can finish these in time.
    await waitUntilIndexed(client, kb, ids, 240_000);
    expect(await outboxCount(deployment, 'published', 'relay')).toBeGreaterThanOrEqual(corpus.length);
  }, 400_000);

    it('a malformed payload goes to the dead-letter topic and the consumer keeps going', async () => {
    const kafka = new Kafka({ clientId: 'drill', brokers: [`127.0.0.1:${infra.kafkaPort}`], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: `${deployment.env.TRELLIS_KAFKA_TOPIC_PREFIX}chunk.ready`, messages: [{ key: 'garbage', value: Buffer.from([0xff, 0xff, 0xff, 0x01]) }] });
    await producer.disconnect();
    const cli = (...args: string[]) => execFileSync(process.execPath, [join(ROOT, 'services/standalone/bin/trellis.js'), ...args], { env: deployment.env, encoding: 'utf8' });
    await waitFor(async () => cli('dlq', 'list', 'chunk.ready').includes('garbage'), 60_000, 'the malformed event in chunk.ready.dlq');

    await client.createKnowledgeBase({ name: 'after-poison' });
    const ids = await upload(client, 'after-poison', passages(300, 5));
    await waitUntilIndexed(client, 'after-poison', ids, 120_000);
  }, 200_000);

  it('with the database down readiness turns false, nothing is acknowledged, and work resumes when it returns', async () => {
    await client.createKnowledgeBase({ name: 'db-outage' });
    const corpus = passages(310, 30);
    drills.push({ drill: 'database stop/start', kb: 'db-outage', passages: corpus });
    const ids = await upload(client, 'db-outage', corpus);
    infra.mariadb('stop');
    const graphStore = deployment.processes.get('graph-store')!;
    await waitFor(async () => (await fetch(`http://127.0.0.1:${graphStore.httpPort}/readyz`)).status === 503, 30_000, 'readiness to turn false');
    const outage = await grpcCode(client.uploadDocument({ knowledgeBase: 'db-outage', filename: 'x.txt' }, Buffer.from('During the outage.')));
    expect(outage.code).toBe(status.UNAVAILABLE);
    await new Promise((r) => setTimeout(r, 5_000));
    infra.mariadb('start');
    await waitFor(async () => (await fetch(`http://127.0.0.1:${graphStore.httpPort}/readyz`)).ok, 60_000, 'readiness to return');
    await waitUntilIndexed(client, 'db-outage', ids, 240_000);
    expect(await graphedChunks(client, 'db-outage')).toBeGreaterThanOrEqual(30);
    const dlq = execFileSync(process.execPath, [join(ROOT, 'services/standalone/bin/trellis.js'), 'dlq', 'list', 'chunk.extracted'], { env: deployment.env, encoding: 'utf8' });
    expect(dlq).toContain('no dead letters');
  }, 400_000);

  it.each(['chunking', 'graph-store'] as const)('kill -9 of %s mid-ingest: its work is redelivered and done once', async (service) => {
    const kb = `kill-${service}`;
    const corpus = passages(SERVICE_SLICES[service], 40);
    drills.push({ drill: `kill -9 ${service}`, kb, passages: corpus });
    await client.createKnowledgeBase({ name: kb });
    const ids = await upload(client, kb, corpus);
    await waitFor(async () => (await client.listAllDocuments(kb)).some((d) => d.status !== 'INDEX_STATUS_PENDING'), 120_000, 'indexing to start');
    await deployment.kill(service);
    await deployment.start(service);
    await waitUntilIndexed(client, kb, ids, 240_000);
  }, 400_000);

  it('kill -9 of ingestion during a batch of uploads: every refused upload sent again is indexed, none stuck', async () => {
    const kb = 'kill-ingestion';
    const corpus = passages(SERVICE_SLICES.ingestion, 40);
    drills.push({ drill: 'kill -9 ingestion', kb, passages: corpus });
    await client.createKnowledgeBase({ name: kb });
    const ids = await upload(client, kb, corpus.slice(0, 20));
    await deployment.kill('ingestion');
    // Uploads while it is down are refused with a status, not lost silently.
    expect((await grpcCode(upload(client, kb, corpus.slice(20, 21)))).code).toBe(status.UNAVAILABLE);
    await deployment.start('ingestion');
    await answeringAgain(() => client.listDocuments(kb), 'ingestion');
    ids.push(...(await upload(client, kb, corpus.slice(20))));
    await waitUntilIndexed(client, kb, ids, 240_000);
  }, 400_000);

  it('kill -9 of retrieval and chat mid-ingest: indexing goes on, and both answer once restarted', async () => {
    const kb = 'kill-query';
    const corpus = passages(SERVICE_SLICES.query, 20);
    drills.push({ drill: 'kill -9 retrieval and chat', kb, passages: corpus });
    await client.createKnowledgeBase({ name: kb });
    const ids = await upload(client, kb, corpus);
    await deployment.kill('retrieval');
    await deployment.kill('chat');
    await deployment.start('retrieval');
    await deployment.start('chat');
    await waitUntilIndexed(client, kb, ids, 240_000);
    await answeringAgain(() => client.retrieveChunks({ knowledgeBase: kb, query: 'warm up' }), 'retrieval');
    await answeringAgain(() => client.ask({ knowledgeBase: kb, question: 'warm up' }), 'chat');
    const { chunks } = await client.retrieveChunks({ knowledgeBase: kb, query: corpus[0]!.title, mode: 'fulltext', topK: 10 });
    expect(chunks.map((c) => c.documentId)).toContain(ids[0]);
    expect((await client.ask({ knowledgeBase: kb, question: `What is ${corpus[0]!.title}?` })).citations.length).toBeGreaterThan(0);
  }, 300_000);

  it('every drill: the same graph as a clean run of its passages (0 lost, 0 duplicated, 0 stuck)', async () => {
    const reference = await startStandaloneProcess({ env: { TRELLIS_EMBEDDINGS: 'hash' } });
    const clean = new TrellisClient({ address: reference.grpcAddress, timeoutMs: 60_000 });
    try {
      const outcomes = [];
      for (const { drill, kb, passages: corpus } of drills) {
        await clean.createKnowledgeBase({ name: kb });
        await waitUntilIndexed(clean, kb, await upload(clean, kb, corpus), 240_000);
        outcomes.push(await drillOutcome(drill, kb, client, clean));
      }
      console.log(`failure drills against a clean run:\n${drillTable(outcomes)}`);
      expect(outcomes.map((o) => o.drill)).toHaveLength(8);
      expect(outcomes.filter((o) => o.lost + o.duplicated + o.changed + o.stuck > 0)).toEqual([]);
    } finally {
      clean.close();
      await reference.dispose();
    }
  }, 600_000);
});
