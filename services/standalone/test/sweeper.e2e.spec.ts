import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { loadConfig } from '@trellis/config';
import { DEFAULT_TENANT } from '@trellis/contracts';
import type { TopicName } from '@trellis/contracts';
import type { RunningProcess } from '@trellis/runtime';
import { FakeOpenAiServer, fakeProviderEnv, freePort, waitFor } from '@trellis/testing';
import { startStandaloneServer } from '../src';
import { comparableGraph, duplicatesIn } from './graph-shape';
import { EXAMPLES_DIR, uploadExamples, waitUntilIndexed } from './helpers';

interface Server {
  running: RunningProcess;
  client: TrellisClient;
  /** Events of a knowledge base that are "published" but never delivered: a write whose event was lost. */
  lose(kbId: string, topic: TopicName, count: number): void;
  lost: Array<{ topic: TopicName; documentId: string }>;
  metrics(): Promise<string>;
  dispose(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-sweeper-'));
  const config = loadConfig(
    { TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(await freePort()), TRELLIS_HTTP_PORT: String(await freePort()), TRELLIS_LOG_LEVEL: 'silent', TRELLIS_EMBEDDINGS: 'hash', ...env },
    'standalone',
  );
  const running = await startStandaloneServer(config);
  const client = new TrellisClient({ address: running.grpcAddress!, timeoutMs: 60_000 });
  // Every stage publishes through this one bus object; dropping a publish here is exactly
  // "the write committed, the event never reached the broker".
  const bus = running.runtime.bus;
  const deliver = bus.publish.bind(bus);
  const toLose = new Map<string, number>();
  const lost: Server['lost'] = [];
  bus.publish = (async (topic, key, payload, headers) => {
    const context = (payload as { context?: { knowledgeBaseId: string; documentId: string } }).context;
    const rule = `${context?.knowledgeBaseId}\u0000${topic}`;
    const left = toLose.get(rule) ?? 0;
    if (context !== undefined && left > 0) {
      toLose.set(rule, left - 1);
      lost.push({ topic, documentId: context.documentId });
      return;
    }
    await deliver(topic, key, payload, headers);
  }) as typeof bus.publish;
  return {
    running,
    client,
    lost,
    lose: (kbId, topic, count) => toLose.set(`${kbId}\u0000${topic}`, count),
    metrics: async () => (await fetch(`http://127.0.0.1:${running.httpPort}/metrics`)).text(),
    dispose: async () => {
      client.close();
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A sample of trellis_sweeper_redrives_total; the registry adds the process's `service` label. */
function metric(text: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`trellis_sweeper_redrives_total{${labels},`) || l.startsWith(`trellis_sweeper_redrives_total{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

describe('sweeper in a standalone server (in-process bus, SQLite)', () => {
  let server: Server | undefined;

  afterEach(async () => {
    await server?.dispose();
    server = undefined;
  });

  it('re-drives a lost document.ingested, chunk.ready and chunk.extracted: the graph equals a clean run, 0 duplicates, also after every event is delivered again', async () => {
    server = await startServer({ TRELLIS_SWEEP_INTERVAL_MS: '200', TRELLIS_STUCK_AFTER_MS: '1500' });
    const { client } = server;
    await client.createKnowledgeBase({ name: 'clean' });
    const cleanIds = (await uploadExamples(client, 'clean')).map((d) => d.id);
    await waitUntilIndexed(client, 'clean', cleanIds, 120_000);
    const clean = await client.exportGraph('clean');

    const kb = await client.createKnowledgeBase({ name: 'lossy' });
    server.lose(kb.id, 'document.ingested', 1);
    server.lose(kb.id, 'chunk.ready', 1);
    server.lose(kb.id, 'chunk.extracted', 1);
    const ids = (await uploadExamples(client, 'lossy')).map((d) => d.id);
    await waitFor(async () => server!.lost.length === 3 || undefined, 60_000, 'three events lost');
    // Without the sweeper these would stay where they are (the failure the issue measured).
    const documents = await client.listAllDocuments('lossy');
    expect(documents.filter((d) => d.status === 'INDEX_STATUS_PENDING').map((d) => d.id)).toEqual([server.lost.find((l) => l.topic === 'document.ingested')!.documentId]);

    const indexed = await waitUntilIndexed(client, 'lossy', ids, 120_000);
    expect(indexed.every((d) => d.chunkCounts.every((c) => c.status === 'INDEX_STATUS_GRAPHED'))).toBe(true);
    const lossy = await client.exportGraph('lossy');
    expect(comparableGraph(lossy)).toEqual(comparableGraph(clean));
    expect(comparableGraph(lossy).counts.entities).toBeGreaterThan(10);
    expect(duplicatesIn(lossy)).toEqual({ entities: 0, relationships: 0 });

    // Re-delivering every event of the finished work (what a sweeper re-drive of slow but
    // not lost work amounts to) changes nothing: the consumers are idempotent.
    const scope = { tenantId: DEFAULT_TENANT, kbId: kb.id };
    const { bus, repositories } = server.running.runtime;
    for (const document of indexed) {
      const context = { tenantId: scope.tenantId, knowledgeBaseId: scope.kbId, documentId: document.id, documentVersion: document.version, traceparent: '', knowledgeBase: undefined };
      const stored = await repositories.documents.getDocument(scope, document.id);
      await bus.publish('document.ingested', document.id, { context, contentHash: stored!.contentHash });
      for (const chunk of await repositories.chunks.listChunks(scope, document.id, document.version)) {
        await bus.publish('chunk.ready', document.id, { context, chunkId: chunk.id, contentHash: chunk.contentHash });
      }
    }
    await waitFor(async () => (await bus.consumerLag()).every((l) => l.messages === 0) || undefined, 60_000, 'the replayed events to be handled');
    await waitUntilIndexed(client, 'lossy', ids, 60_000);
    const replayed = await client.exportGraph('lossy');
    expect(comparableGraph(replayed)).toEqual(comparableGraph(clean));
    expect(duplicatesIn(replayed)).toEqual({ entities: 0, relationships: 0 });

    const metrics = await server.metrics();
    // The document whose document.ingested was lost; the chunk whose chunk.ready was lost and the
    // one whose chunk.extracted was. At least: on a loaded machine work that is merely slow waits
    // past the short timeout too, and re-driving it is harmless (the graph above is the proof).
    expect(metric(metrics, 'item="document",action="redriven"')).toBeGreaterThanOrEqual(1);
    expect(metric(metrics, 'item="chunk",action="redriven"')).toBeGreaterThanOrEqual(2);
    expect(metric(metrics, 'item="document",action="gave_up"') + metric(metrics, 'item="chunk",action="gave_up"')).toBe(0);
  }, 300_000);

  it('re-uploading content that is not graphed yet announces it again; once graphed, it is unchanged', async () => {
    server = await startServer({ TRELLIS_SWEEP_INTERVAL_MS: '0' });
    const { client } = server;
    const kb = await client.createKnowledgeBase({ name: 'reupload' });
    server.lose(kb.id, 'document.ingested', 1);
    const name = readdirSync(EXAMPLES_DIR).sort()[0]!;
    const bytes = readFileSync(join(EXAMPLES_DIR, name));
    const first = await client.uploadDocument({ knowledgeBase: 'reupload', filename: name, sourceUri: name }, bytes);
    expect(server.lost).toEqual([{ topic: 'document.ingested', documentId: first.id }]);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await client.listAllDocuments('reupload')).map((d) => d.status)).toEqual(['INDEX_STATUS_PENDING']);

    const again = await client.uploadDocument({ knowledgeBase: 'reupload', filename: name, sourceUri: name }, bytes);
    expect({ id: again.id, version: again.version, unchanged: again.unchanged }).toEqual({ id: first.id, version: first.version, unchanged: false });
    await waitUntilIndexed(client, 'reupload', [first.id], 60_000);
    const third = await client.uploadDocument({ knowledgeBase: 'reupload', filename: name, sourceUri: name }, bytes);
    expect({ version: third.version, unchanged: third.unchanged, status: third.status }).toEqual({ version: first.version, unchanged: true, status: 'INDEX_STATUS_GRAPHED' });
  }, 120_000);

  it('leaves a backlog alone while its events are queued: work waiting past the stuck timeout is indexed once, not re-driven', async () => {
    server = await startServer({ TRELLIS_SWEEP_INTERVAL_MS: '100', TRELLIS_STUCK_AFTER_MS: '300' });
    const { client } = server;
    await client.createKnowledgeBase({ name: 'backlog' });
    // Uploaded faster than they index: most wait in the bus for seconds, far past 300 ms.
    const uploads = Array.from({ length: 200 }, (_, i) =>
      client.uploadDocument({ knowledgeBase: 'backlog', filename: `note-${i}.txt`, sourceUri: `notes/${i}` }, Buffer.from(`Note ${i}. Marie Curie and Pierre Curie measured radium sample ${i} in Paris.`)),
    );
    const ids = (await Promise.all(uploads)).map((d) => d.id);
    await waitUntilIndexed(client, 'backlog', ids, 240_000);
    const metrics = await server.metrics();
    expect(metric(metrics, 'item="document",action="redriven"') + metric(metrics, 'item="chunk",action="redriven"')).toBe(0);
    // Each document went through chunking once.
    const scope = { tenantId: DEFAULT_TENANT, kbId: (await client.listKnowledgeBases()).knowledgeBases.find((k) => k.name === 'backlog')!.id };
    const stages = await Promise.all(ids.slice(0, 20).map((id) => server!.running.runtime.repositories.documents.listStages(scope, id, 1)));
    expect(stages.map((s) => s.find((stage) => stage.stage === 'chunking')?.events)).toEqual(ids.slice(0, 20).map(() => 1));
  }, 300_000);

  it('does not announce a re-upload again while indexing events are queued: each document is chunked once', async () => {
    // A model answering in 150 ms, one call at a time, keeps the uploads queued for seconds.
    const llm = new FakeOpenAiServer(16);
    llm.respondWith(() => ({ kind: 'content', content: JSON.stringify({ entities: [], relationships: [] }), delayMs: 150 }));
    const baseUrl = await llm.start();
    try {
      server = await startServer({ ...fakeProviderEnv(baseUrl, 16), TRELLIS_EMBEDDINGS: 'hash', TRELLIS_LLM_MAX_CONCURRENCY: '1', TRELLIS_SWEEP_INTERVAL_MS: '0' });
      const { client } = server;
      await client.createKnowledgeBase({ name: 'again' });
      const upload = (i: number) => client.uploadDocument({ knowledgeBase: 'again', filename: `note-${i}.txt`, sourceUri: `notes/${i}` }, Buffer.from(`Note ${i} about radium.`));
      // Each uploaded twice in a row (an ingest run again), the second while the first is still queued.
      const uploads = await Promise.all(Array.from({ length: 20 }, (_, i) => upload(i).then(async (first) => [first, await upload(i)] as const)));
      const ids = uploads.map(([first]) => first.id);
      expect(uploads.map(([, again]) => again.id)).toEqual(ids);
      expect(uploads.filter(([, again]) => again.status !== 'INDEX_STATUS_GRAPHED').length).toBeGreaterThan(10);
      await waitUntilIndexed(client, 'again', ids, 120_000);
      const scope = { tenantId: DEFAULT_TENANT, kbId: (await client.listKnowledgeBases()).knowledgeBases.find((k) => k.name === 'again')!.id };
      const stages = await Promise.all(ids.map((id) => server!.running.runtime.repositories.documents.listStages(scope, id, 1)));
      expect(stages.map((s) => s.find((stage) => stage.stage === 'chunking')?.events)).toEqual(ids.map(() => 1));
    } finally {
      await llm.stop();
    }
  }, 180_000);
});
