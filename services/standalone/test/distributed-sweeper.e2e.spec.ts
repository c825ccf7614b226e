import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import type { v1 } from '@trellis/contracts';
import { DistributedDeployment, waitFor } from '@trellis/testing';
import { comparableGraph, duplicatesIn } from './graph-shape';
import { uploadExamples, waitUntilIndexed } from './helpers';

const kafkaBrokers = process.env.TRELLIS_TEST_KAFKA_BROKERS;
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;
const STUCK_AFTER_MS = 5_000;

/** Chunk counts of a knowledge base by status. */
async function chunkStatuses(client: TrellisClient, kb: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const d of (await client.listAllDocuments(kb))) for (const c of d.chunkCounts) counts[c.status] = (counts[c.status] ?? 0) + c.count;
  return counts;
}

function redrives(metrics: string, item: 'document' | 'chunk'): number {
  const line = metrics.split('\n').find((l) => l.startsWith('trellis_sweeper_redrives_total{') && l.includes(`item="${item}"`) && l.includes('action="redriven"'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

if (!kafkaBrokers || !mysqlUrl) {
  // CI sets both (scripts/test.mjs starts the broker and the database): without them this must fail, not pass unseen.
  describe('sweeper in the distributed deployment', () => {
    it('needs TRELLIS_TEST_KAFKA_BROKERS and TRELLIS_TEST_MYSQL_URL', () => {
      throw new Error('set TRELLIS_TEST_KAFKA_BROKERS and TRELLIS_TEST_MYSQL_URL (npm test starts Kafka and MariaDB and sets them)');
    });
  });
} else {
  /**
   * Events lost for real on a real broker: with the consuming service down, its group's offsets
   * are moved past the events (as if they had never reached the broker), then the service comes
   * back to nothing to consume. Only the sweeper (in ingestion) can finish those documents.
   */
  describe('sweeper in the distributed deployment (six processes, Kafka, MariaDB)', () => {
    let deployment: DistributedDeployment;
    let client: TrellisClient;
    let kafka: Kafka;
    let prefix: string;

    beforeAll(async () => {
      deployment = new DistributedDeployment({
        kafkaBrokers,
        mysqlUrl,
        runId: randomBytes(4).toString('hex'),
        extraEnv: {
          TRELLIS_KAFKA_SESSION_TIMEOUT_MS: '8000',
          TRELLIS_EMBEDDINGS: 'hash',
          TRELLIS_SWEEP_INTERVAL_MS: '500',
          TRELLIS_STUCK_AFTER_MS: String(STUCK_AFTER_MS),
          // A loaded machine may keep work waiting several timeouts: re-driving it is harmless, failing it is not.
          TRELLIS_MAX_REDRIVES: '100',
        },
      });
      prefix = deployment.env.TRELLIS_KAFKA_TOPIC_PREFIX!;
      kafka = new Kafka({ clientId: 'sweeper-e2e', brokers: kafkaBrokers.split(','), logLevel: logLevel.NOTHING });
      deployment.prepare();
      await deployment.startAll();
      client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses(), timeoutMs: 60_000 });
    }, 300_000);

    afterAll(async () => {
      client?.close();
      await deployment?.tearDown();
    }, 120_000);

    /** With the group's service down (killed), moves its offsets to the end of `topic`: every event there is lost to it. */
    async function loseEvents(group: string, topic: string): Promise<void> {
      const admin = kafka.admin();
      await admin.connect();
      try {
        const ends = await admin.fetchTopicOffsets(`${prefix}${topic}`);
        // The killed member stays in the group until its session times out; until then the broker refuses.
        await waitFor(
          async () =>
            admin.setOffsets({ groupId: `${prefix}${group}`, topic: `${prefix}${topic}`, partitions: ends.map((p) => ({ partition: p.partition, offset: p.high })) }).then(
              () => true,
              () => undefined,
            ),
          60_000,
          `${group} to have no members`,
        );
        const offsets = await admin.fetchOffsets({ groupId: `${prefix}${group}`, topics: [`${prefix}${topic}`] });
        expect(offsets[0]!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual(ends.map((p) => [p.partition, p.high]).sort());
      } finally {
        await admin.disconnect();
      }
    }

    it('finishes documents whose document.ingested and chunk.extracted never reached their consumers: same graph as a clean run, 0 duplicates', async () => {
      await client.createKnowledgeBase({ name: 'clean' });
      const cleanIds = (await uploadExamples(client, 'clean')).map((d) => d.id);
      await waitUntilIndexed(client, 'clean', cleanIds, 180_000);
      const clean = await client.exportGraph('clean');

      // 1. Every document.ingested of the uploads is lost: the documents are written, chunking never hears of them.
      await deployment.kill('graph-store');
      await deployment.kill('chunking');
      await client.createKnowledgeBase({ name: 'lossy' });
      const ids = (await uploadExamples(client, 'lossy')).map((d) => d.id);
      await loseEvents('chunking', 'document.ingested');
      const pending = (await client.listAllDocuments('lossy')).filter((d) => d.status === 'INDEX_STATUS_PENDING');
      expect(pending.length).toBe(ids.length);
      await deployment.start('chunking');

      // 2. The sweeper re-drives them; extraction runs; every chunk.extracted is then lost to graph-store.
      const total = await waitFor(
        async () => {
          const documents = await client.listAllDocuments('lossy');
          const chunked = documents.length === ids.length && documents.every((d) => d.chunkCounts.length > 0 && d.chunkCounts.every((c) => c.status === 'INDEX_STATUS_EXTRACTED'));
          return chunked ? documents.reduce((n, d) => n + d.chunkCounts.reduce((m, c) => m + c.count, 0), 0) : undefined;
        },
        180_000,
        'every chunk extracted',
      );
      await loseEvents('graph-store', 'chunk.extracted');
      expect(await chunkStatuses(client, 'lossy')).toEqual({ INDEX_STATUS_EXTRACTED: total });
      await deployment.start('graph-store');

      // 3. The sweeper re-drives the chunks (chunk.ready: extraction answers from its cache) into the graph.
      const documents: v1.Document[] = await waitUntilIndexed(client, 'lossy', ids, 180_000);
      expect(documents.every((d) => d.chunkCounts.every((c) => c.status === 'INDEX_STATUS_GRAPHED'))).toBe(true);
      const lossy = await client.exportGraph('lossy');
      expect(comparableGraph(lossy)).toEqual(comparableGraph(clean));
      expect(comparableGraph(lossy).counts.entities).toBeGreaterThan(20);
      expect(duplicatesIn(lossy)).toEqual({ entities: 0, relationships: 0 });
      expect(await chunkStatuses(client, 'lossy')).toEqual({ INDEX_STATUS_GRAPHED: total });

      const metrics = await (await fetch(`http://127.0.0.1:${deployment.processes.get('ingestion')!.httpPort}/metrics`)).text();
      expect(redrives(metrics, 'document')).toBeGreaterThanOrEqual(ids.length);
      expect(redrives(metrics, 'chunk')).toBeGreaterThanOrEqual(total);
      expect(deployment.processes.get('ingestion')!.log).not.toContain('sweep failed');
    }, 600_000);

    it('re-drives nothing while graph-store is down with chunk.extracted queued for it, and each chunk is graphed once it is back', async () => {
      const redrivenSoFar = async () => {
        const metrics = await (await fetch(`http://127.0.0.1:${deployment.processes.get('ingestion')!.httpPort}/metrics`)).text();
        return { documents: redrives(metrics, 'document'), chunks: redrives(metrics, 'chunk') };
      };
      const before = await redrivenSoFar();
      await deployment.kill('graph-store');
      await client.createKnowledgeBase({ name: 'queued' });
      const ids = (await uploadExamples(client, 'queued')).map((d) => d.id);
      await waitFor(
        async () => {
          const documents = await client.listAllDocuments('queued');
          return documents.length === ids.length && documents.every((d) => d.chunkCounts.length > 0 && d.chunkCounts.every((c) => c.status === 'INDEX_STATUS_EXTRACTED')) || undefined;
        },
        180_000,
        'every chunk extracted',
      );
      // Well past TRELLIS_STUCK_AFTER_MS, several sweeps: the chunks look stuck, but their events
      // wait in graph-store's queue, which the sweeper in ingestion reads from the broker.
      await new Promise((resolve) => setTimeout(resolve, STUCK_AFTER_MS + 3_000));
      expect(await redrivenSoFar()).toEqual(before);

      await deployment.start('graph-store');
      await waitUntilIndexed(client, 'queued', ids, 180_000);
      expect(await redrivenSoFar()).toEqual(before);
      expect(duplicatesIn(await client.exportGraph('queued'))).toEqual({ entities: 0, relationships: 0 });
    }, 600_000);
  });
}
