import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { loadConfig } from '@trellis/config';
import type { v1 } from '@trellis/contracts';
import { startTracing } from '@trellis/observability';
import type { TracingHandle } from '@trellis/observability';
import type { RunningProcess } from '@trellis/runtime';
import { FakeOpenAiServer, freePort } from '@trellis/testing';
import { startStandaloneServer } from '../src';
import { EXAMPLES_DIR, grpcCode, sample, waitUntilIndexed } from './helpers';

async function startInProcess(env: Record<string, string> = {}): Promise<{ running: RunningProcess; client: TrellisClient; scrape: () => Promise<string>; dispose: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-observability-'));
  const config = loadConfig({ TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(await freePort()), TRELLIS_HTTP_PORT: String(await freePort()), TRELLIS_LOG_LEVEL: 'silent', ...env }, 'standalone');
  const running = await startStandaloneServer(config);
  const client = new TrellisClient({ address: running.grpcAddress! });
  return {
    running,
    client,
    scrape: async () => (await fetch(`http://127.0.0.1:${running.httpPort}/metrics`)).text(),
    dispose: async () => {
      client.close();
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function chunkTotal(document: v1.Document): number {
  return document.chunkCounts.reduce((n, c) => n + c.count, 0);
}

const exporter = new InMemorySpanExporter();
let tracing: TracingHandle;

beforeAll(() => {
  // Stands in for an OTLP collector: the process then records spans as it would in production.
  tracing = startTracing({ serviceName: 'trellis-test', spanProcessors: [new SimpleSpanProcessor({ exporter })] });
});

afterAll(async () => {
  await tracing.shutdown();
});

describe('observability of a standalone process (in-process bus, local models)', () => {
  let server: Awaited<ReturnType<typeof startInProcess>>;
  let before: string;
  let documents: v1.Document[];

  beforeAll(async () => {
    server = await startInProcess();
    await server.client.createKnowledgeBase({ name: 'obs' });
    before = await server.scrape();
    const uploaded: v1.Document[] = [];
    for (const name of ['marie-curie.md', 'polonium.txt']) {
      uploaded.push(await server.client.uploadDocument({ knowledgeBase: 'obs', filename: name, sourceUri: `examples/${name}` }, readFileSync(join(EXAMPLES_DIR, name))));
    }
    documents = await waitUntilIndexed(server.client, 'obs', uploaded.map((d) => d.id));
  });

  afterAll(async () => {
    await server?.dispose();
  });

  it('counts uploads, their latency and their outcome', async () => {
    await server.client.uploadDocument({ knowledgeBase: 'obs', filename: 'polonium.txt', sourceUri: 'examples/polonium.txt' }, readFileSync(join(EXAMPLES_DIR, 'polonium.txt')));
    const after = await server.scrape();
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('trellis_grpc_requests_total', { method: 'UploadDocument', code: 'OK' })).toBe(3);
    expect(delta('trellis_grpc_request_duration_seconds_count', { method: 'UploadDocument', code: 'OK' })).toBe(3);
    expect(delta('trellis_documents_ingested_total', { outcome: 'new_version' })).toBe(2);
    expect(delta('trellis_documents_ingested_total', { outcome: 'unchanged' })).toBe(1);
    expect(sample(after, 'trellis_grpc_requests_total', { method: 'CreateKnowledgeBase', code: 'OK' })).toBe(1);
  });

  it('counts indexing events per topic: one per document, then one per chunk', async () => {
    const after = await server.scrape();
    const chunks = documents.reduce((n, d) => n + chunkTotal(d), 0);
    expect(chunks).toBeGreaterThan(2);
    const handled = (topic: string) => sample(after, 'trellis_events_handled_total', { topic, outcome: 'ok' }) - sample(before, 'trellis_events_handled_total', { topic, outcome: 'ok' });
    expect(handled('document.ingested')).toBe(2);
    expect(handled('chunk.ready')).toBe(chunks);
    expect(handled('chunk.extracted')).toBe(chunks);
    expect(sample(after, 'trellis_event_processing_duration_seconds_count', { topic: 'chunk.ready' })).toBe(chunks);
    expect(sample(after, 'trellis_events_handled_total', { outcome: 'dead_letter' })).toBe(0);
    // Everything is graphed, so nothing is left in the backlog gauge.
    expect(sample(after, 'trellis_documents_indexing')).toBe(0);
    expect(after).toContain('trellis_nodejs_eventloop_lag_seconds');
    // The in-process bus reports consumer lag under the same names as Kafka, so dashboards work in both modes.
    for (const [topic, group] of [['document.ingested', 'chunking'], ['chunk.ready', 'extraction'], ['chunk.extracted', 'graph-store']] as const) {
      expect(after).toMatch(new RegExp(`^trellis_consumer_lag_messages\\{topic="${topic}",group="${group}"[^}]*\\} 0$`, 'm'));
    }
  });

  it('measures retrieval by mode and names failed calls by status code', async () => {
    await server.client.retrieveChunks({ knowledgeBase: 'obs', query: 'polonium', mode: 'vector', topK: 3 });
    await server.client.retrieveChunks({ knowledgeBase: 'obs', query: 'polonium', topK: 3 });
    await server.client.retrieveGraph({ knowledgeBase: 'obs', query: 'Marie Curie' });
    expect((await grpcCode(server.client.retrieveChunks({ knowledgeBase: 'obs', query: '', topK: 3 }))).code).toBe(3);
    expect((await grpcCode(server.client.getDocument('obs', 'no-such-document'))).code).toBe(5);
    const after = await server.scrape();
    expect(sample(after, 'trellis_retrieval_duration_seconds_count', { method: 'RetrieveChunks', mode: 'vector' })).toBe(1);
    expect(sample(after, 'trellis_retrieval_duration_seconds_count', { method: 'RetrieveChunks', mode: 'hybrid' })).toBe(2);
    expect(sample(after, 'trellis_retrieval_duration_seconds_count', { method: 'RetrieveGraph', mode: 'graph' })).toBe(1);
    expect(sample(after, 'trellis_grpc_requests_total', { method: 'RetrieveChunks', code: 'INVALID_ARGUMENT' })).toBe(1);
    expect(sample(after, 'trellis_grpc_requests_total', { method: 'GetDocument', code: 'NOT_FOUND' })).toBe(1);
  });

  it('counts server-streaming calls when the stream ends', async () => {
    const events = [];
    for await (const event of server.client.chat({ knowledgeBase: 'obs', question: 'Who discovered polonium?' })) events.push(event);
    expect(events.length).toBeGreaterThan(1);
    const after = await server.scrape();
    expect(sample(after, 'trellis_grpc_requests_total', { method: 'Chat', code: 'OK' })).toBe(1);
  });

  it('traces one document from upload through chunking, extraction and graph writes as one trace', () => {
    const spans = exporter.getFinishedSpans();
    const upload = spans.find((s) => s.name === 'trellis.v1.KnowledgeBaseService/UploadDocument' && s.kind === SpanKind.SERVER);
    expect(upload).toBeDefined();
    const trace = spans.filter((s) => s.spanContext().traceId === upload!.spanContext().traceId);
    const names = new Set(trace.map((s) => s.name));
    for (const name of ['document.ingested publish', 'document.ingested process', 'chunk.ready process', 'chunk.extracted process', 'db.applyChunkExtraction']) expect(names).toContain(name);
    // Each hop is a child of the one before it: graph-store ← extraction ← chunking ← upload, through publish spans.
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
    const parentName = (s: ReadableSpan) => byId.get(s.parentSpanContext?.spanId ?? '')?.name;
    const one = (name: string) => trace.find((s) => s.name === name)!;
    expect(parentName(one('document.ingested publish'))).toBe(upload!.name);
    expect(parentName(one('document.ingested process'))).toBe('document.ingested publish');
    expect(parentName(one('chunk.ready publish'))).toBe('document.ingested process');
    expect(parentName(one('chunk.ready process'))).toBe('chunk.ready publish');
    expect(parentName(one('chunk.extracted process'))).toBe('chunk.extracted publish');
    expect(parentName(one('chunk.extracted publish'))).toBe('chunk.ready process');
    expect(parentName(one('db.applyChunkExtraction'))).toBe('chunk.extracted process');
    const consumer = trace.find((s) => s.name === 'chunk.extracted process')!;
    expect(consumer.attributes['messaging.consumer.group.name']).toBeTypeOf('string');
    expect(consumer.attributes['trellis.tenant']).toBeTypeOf('string');
  });

  it('puts the store calls of each hop into the trace of the document as database client spans, without text', () => {
    const spans = exporter.getFinishedSpans();
    const upload = spans.find((s) => s.name === 'trellis.v1.KnowledgeBaseService/UploadDocument' && s.kind === SpanKind.SERVER)!;
    const trace = spans.filter((s) => s.spanContext().traceId === upload.spanContext().traceId);
    const byId = new Map(trace.map((s) => [s.spanContext().spanId, s]));
    /** The nearest ancestor that is not a database span: the hop the call belongs to. */
    const hopOf = (span: ReadableSpan) => {
      let parent = byId.get(span.parentSpanContext?.spanId ?? '');
      while (parent?.name.startsWith('db.')) parent = byId.get(parent.parentSpanContext?.spanId ?? '');
      return parent?.name;
    };
    const db = trace.filter((s) => s.name.startsWith('db.'));
    const one = (name: string) => db.find((s) => s.name === name);
    expect(one('db.saveDocumentVersion') && hopOf(one('db.saveDocumentVersion')!)).toBe(upload.name);
    expect(one('db.upsertChunks') && hopOf(one('db.upsertChunks')!)).toBe('document.ingested process');
    expect(one('db.applyChunkExtraction') && hopOf(one('db.applyChunkExtraction')!)).toBe('chunk.extracted process');
    for (const span of db) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.attributes['db.system.name']).toBe('sqlite');
      expect(span.attributes['db.operation.name']).toBe(span.name.slice('db.'.length));
    }
    // polonium.txt is in this trace; neither its words nor SQL are.
    const recorded = JSON.stringify(db.map((s) => ({ attributes: s.attributes, events: s.events, status: s.status })));
    expect(recorded).not.toMatch(/polonium|Curie|SELECT|INSERT/i);
  });

  it('keeps questions out of spans unless TRELLIS_TRACE_CONTENT asks for them', () => {
    const retrieval = exporter.getFinishedSpans().filter((s) => s.name === 'trellis.v1.RetrievalService/RetrieveChunks');
    expect(retrieval.length).toBeGreaterThan(0);
    for (const span of retrieval) {
      expect(span.attributes['trellis.request.text']).toBeUndefined();
      expect(JSON.stringify(span.attributes)).not.toContain('polonium');
    }
    expect(retrieval.some((s) => s.attributes['trellis.retrieval.mode'] === 'vector')).toBe(true);
  });
});

describe('observability of model calls (fake OpenAI-compatible provider)', () => {
  const fake = new FakeOpenAiServer(64);
  let server: Awaited<ReturnType<typeof startInProcess>>;

  beforeAll(async () => {
    fake.respondWith((request) =>
      request.response_format
        ? { kind: 'content', content: JSON.stringify({ entities: [{ name: 'Ada Lovelace', type: 'person', description: 'A mathematician.' }], relationships: [] }) }
        : { kind: 'content', content: 'Ada Lovelace [1].' },
    );
    const baseUrl = await fake.start();
    server = await startInProcess({
      OPENAI_BASE_URL: baseUrl,
      OPENAI_API_KEY: 'test-key',
      TRELLIS_LLM_MODEL: 'gpt-4o-mini',
      TRELLIS_EMBEDDING_MODEL: 'text-embedding-3-small',
      TRELLIS_EMBEDDING_DIMENSIONS: '64',
    });
    await server.client.createKnowledgeBase({ name: 'llm' });
    const document = await server.client.uploadDocument({ knowledgeBase: 'llm', filename: 'ada.txt' }, Buffer.from('Ada Lovelace wrote the first published algorithm.'));
    await waitUntilIndexed(server.client, 'llm', [document.id]);
  });

  afterAll(async () => {
    await server?.dispose();
    await fake.stop();
  });

  it('counts calls, reported tokens and estimated cost by model, and embedding batch latency', async () => {
    const scrape = await server.scrape();
    const chats = fake.chatRequests().length;
    expect(chats).toBeGreaterThan(0);
    expect(sample(scrape, 'trellis_llm_requests_total', { model: 'gpt-4o-mini', operation: 'chat', outcome: 'ok' })).toBe(chats);
    expect(sample(scrape, 'trellis_llm_tokens_total', { model: 'gpt-4o-mini', direction: 'input' })).toBeGreaterThan(0);
    expect(sample(scrape, 'trellis_llm_tokens_total', { model: 'gpt-4o-mini', direction: 'output' })).toBeGreaterThan(0);
    expect(sample(scrape, 'trellis_llm_estimated_cost_dollars_total', { model: 'gpt-4o-mini' })).toBeGreaterThan(0);
    const embeddingCalls = fake.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    expect(sample(scrape, 'trellis_embedding_batch_duration_seconds_count', { model: 'text-embedding-3-small' })).toBe(embeddingCalls);
  });

  it('records model spans with model and token counts, and no prompt text', () => {
    const spans = exporter.getFinishedSpans().filter((s) => s.attributes['gen_ai.request.model'] === 'gpt-4o-mini');
    expect(spans.length).toBeGreaterThan(0);
    const span = spans[0]!;
    expect(span.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(JSON.stringify(span.attributes)).not.toContain('Lovelace');
  });
});
