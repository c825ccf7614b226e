import type { KbSettings } from '@trellis/contracts';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTracing, trellisTracer } from '@trellis/observability';
import type { TracingHandle } from '@trellis/observability';
import { SqliteStore } from '@trellis/storage';
import type { TrellisRepositories } from '@trellis/storage';
import { traceRepositories } from './traced-store';

const SETTINGS: KbSettings = { chunkSizeTokens: 512, chunkOverlapTokens: 64, splitter: '', embeddingModel: '', embeddingDimensions: 0, llmModel: '', extractionPromptVersion: '' };
const SECRET_TEXT = 'Zanzibar-confidential paragraph';
const SECRET_QUERY = 'Quokka-private question';

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter });
let tracing: TracingHandle;

beforeAll(() => {
  tracing = startTracing({ serviceName: 'traced-store-test', spanProcessors: [processor] });
});

afterAll(async () => {
  await tracing.shutdown();
});

/** Runs `work` inside a parent span, as a gRPC call or an event handler would; returns the parent. */
async function inTrace(work: () => Promise<unknown>): Promise<ReadableSpan> {
  const parent = trellisTracer().startSpan('parent');
  await otelContext.with(trace.setSpan(otelContext.active(), parent), work).catch(() => undefined);
  parent.end();
  // The SDK's resource attributes resolve asynchronously; exports wait for them.
  await processor.forceFlush();
  return exporter.getFinishedSpans().find((s) => s.name === 'parent')!;
}

async function seed(repos: TrellisRepositories) {
  const kb = await repos.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'kb', description: '', settings: SETTINGS });
  const scope = { tenantId: 't1', kbId: kb.id };
  await repos.documents.saveDocumentVersion(scope, { id: 'd1', sourceUri: 'd1.txt', filename: 'd1.txt', mimeType: 'text/plain', contentHash: 'h', version: 1, sizeBytes: 10, metadata: {}, text: SECRET_TEXT });
  return scope;
}

describe('traceRepositories', () => {
  let raw: SqliteStore;

  beforeEach(() => {
    exporter.reset();
    raw = new SqliteStore(':memory:');
  });

  it('makes each call inside a trace a CLIENT span db.<method>, child of the active span', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'sqlite' });
    const parent = await inTrace(async () => {
      const scope = await seed(repos);
      await repos.documents.getDocumentText(scope, 'd1', 1);
      await repos.chunks.searchChunksFullText(scope, SECRET_QUERY, 5);
    });
    const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith('db.'));
    expect(spans.map((s) => s.name)).toEqual(['db.createKnowledgeBase', 'db.saveDocumentVersion', 'db.getDocumentText', 'db.searchChunksFullText']);
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
      expect(span.attributes['db.system.name']).toBe('sqlite');
      expect(span.attributes['db.operation.name']).toBe(span.name.slice(3));
      expect(span.attributes['trellis.tenant']).toBe('t1');
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
    expect(spans[1]!.attributes['trellis.knowledge_base_id']).toBeTypeOf('string');
    // Neither the document text, nor the query, nor the text read back.
    const recorded = JSON.stringify(spans.map((s) => ({ attributes: s.attributes, events: s.events, status: s.status })));
    expect(recorded).not.toContain('Zanzibar');
    expect(recorded).not.toContain('Quokka');
  });

  it('still returns what the adapter returns', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'sqlite' });
    let text: string | null = null;
    await inTrace(async () => {
      const scope = await seed(repos);
      text = await repos.documents.getDocumentText(scope, 'd1', 1);
    });
    expect(text).toBe(SECRET_TEXT);
  });

  it('marks a failed call ERROR with the error code, not its message', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'mariadb' });
    let caught: unknown;
    await inTrace(async () => {
      await repos.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'Zanzibar', description: '', settings: SETTINGS });
      await repos.knowledgeBases.createKnowledgeBase({ tenantId: 't1' }, { name: 'Zanzibar', description: '', settings: SETTINGS }).catch((error: unknown) => {
        caught = error;
        throw error;
      });
    });
    expect(caught).toMatchObject({ code: 'ALREADY_EXISTS' });
    const [ok, failed] = exporter.getFinishedSpans().filter((s) => s.name === 'db.createKnowledgeBase');
    expect(ok!.status.code).toBe(SpanStatusCode.UNSET);
    expect(failed!.status.code).toBe(SpanStatusCode.ERROR);
    expect(failed!.attributes['error.type']).toBe('ALREADY_EXISTS');
    expect(failed!.attributes['db.system.name']).toBe('mariadb');
    expect(JSON.stringify({ attributes: failed!.attributes, status: failed!.status, events: failed!.events })).not.toContain('Zanzibar');
  });

  it('records nothing outside a trace', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'sqlite' });
    await seed(repos);
    await repos.documents.getDocument({ tenantId: 't1', kbId: 'none' }, 'd1');
    await processor.forceFlush();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('traces every repository, under the names the runtime hands them out', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'sqlite' });
    expect(Object.keys(repos).sort()).toEqual(Object.keys(raw.repositories).sort());
    await inTrace(async () => {
      await repos.chats.listChats({ tenantId: 't1' }, { limit: 5 });
      await repos.outbox.countOutboxEvents();
    });
    expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('db.')).map((s) => s.name)).toEqual(['db.listChats', 'db.countOutboxEvents']);
  });

  it('puts search text on the span only when content tracing is asked for', async () => {
    const repos = traceRepositories(raw.repositories, { system: 'sqlite', traceContent: true });
    await inTrace(async () => {
      const scope = await seed(repos);
      await repos.chunks.searchChunksFullText(scope, SECRET_QUERY, 5);
    });
    const search = exporter.getFinishedSpans().find((s) => s.name === 'db.searchChunksFullText')!;
    expect(search.attributes['trellis.request.text']).toBe(SECRET_QUERY);
    const save = exporter.getFinishedSpans().find((s) => s.name === 'db.saveDocumentVersion')!;
    expect(JSON.stringify(save.attributes)).not.toContain('Zanzibar');
  });
});
