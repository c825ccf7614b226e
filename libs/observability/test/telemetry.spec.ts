import { Writable } from 'node:stream';
import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KNOWLEDGE_BASE_SERIES, TrellisMetrics, contextFromCarrier, createLogger, currentTraceparent, estimateCost, loadTelemetrySettings, parseLlmPrices, startTracing, trellisTracer } from '../src';
import type { TracingHandle } from '../src';

describe('telemetry settings', () => {
  it('traces only when an exporter or an OTLP endpoint is configured', () => {
    expect(loadTelemetrySettings({}).tracingEnabled).toBe(false);
    expect(loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracingEnabled).toBe(true);
    expect(loadTelemetrySettings({ OTEL_TRACES_EXPORTER: 'console' }).tracingEnabled).toBe(true);
    expect(loadTelemetrySettings({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracingEnabled).toBe(false);
    expect(loadTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' }).tracingEnabled).toBe(false);
    expect(loadTelemetrySettings({}).traceContent).toBe(false);
    expect(loadTelemetrySettings({ TRELLIS_TRACE_CONTENT: 'true' }).traceContent).toBe(true);
  });

  it('reads prices per million tokens, overriding the defaults, and refuses malformed ones', () => {
    const prices = parseLlmPrices('llama3.1=0:0, gpt-4o-mini=1:2');
    expect(prices.get('llama3.1')).toEqual({ input: 0, output: 0 });
    expect(estimateCost(prices, 'gpt-4o-mini', 1_000_000, 500_000)).toBeCloseTo(2);
    expect(estimateCost(prices, 'text-embedding-3-small', 1_000_000, 0)).toBeCloseTo(0.02);
    expect(estimateCost(prices, 'unknown-model', 1_000, 1_000)).toBe(0);
    expect(() => parseLlmPrices('gpt-4o=cheap')).toThrow(/TRELLIS_LLM_PRICES/);
  });
});

describe('TrellisMetrics', () => {
  it('reads the document backlog from its source at scrape time, capping knowledge bases', async () => {
    const metrics = new TrellisMetrics('test');
    const rows = Array.from({ length: MAX_KNOWLEDGE_BASE_SERIES + 5 }, (_, i) => ({ tenant: 't', knowledgeBase: `kb${i}`, status: 'pending', count: i + 1 }));
    metrics.trackDocuments(async () => rows);
    const scrape = await metrics.registry.metrics();
    const series = scrape.split('\n').filter((l) => l.startsWith('trellis_documents_indexing{'));
    expect(series).toHaveLength(MAX_KNOWLEDGE_BASE_SERIES + 1);
    // The five smallest (1..5 documents) are folded into other/other.
    expect(series).toContain('trellis_documents_indexing{tenant="other",knowledge_base="other",status="pending",service="test"} 15');
    metrics.trackDocuments(async () => []);
    expect((await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('trellis_documents_indexing{'))).toEqual([]);
  });

  it('reports readiness as 1 or 0 at scrape time', async () => {
    const metrics = new TrellisMetrics('test');
    let healthy = true;
    metrics.trackReadiness(async () => {
      if (!healthy) throw new Error('down');
    });
    expect(await metrics.registry.metrics()).toContain('trellis_ready{service="test"} 1');
    healthy = false;
    expect(await metrics.registry.metrics()).toContain('trellis_ready{service="test"} 0');
  });
});

describe('tracing and logs', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: TracingHandle;

  beforeAll(() => {
    tracing = startTracing({ serviceName: 'test', spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  });

  afterAll(async () => {
    await tracing.shutdown();
  });

  it('starts once per process', () => {
    expect(tracing.started).toBe(true);
    expect(startTracing({ serviceName: 'again' }).started).toBe(false);
  });

  it('carries the active span as a W3C traceparent and continues it from one', () => {
    const span = trellisTracer().startSpan('producer');
    const traceparent = trace.getTracer('t').startActiveSpan('outer', (outer) => {
      const value = currentTraceparent();
      outer.end();
      return { value, traceId: outer.spanContext().traceId };
    });
    span.end();
    expect(traceparent.value).toMatch(new RegExp(`^00-${traceparent.traceId}-[0-9a-f]{16}-01$`));
    const continued = trace.getSpanContext(contextFromCarrier({ traceparent: traceparent.value! }));
    expect(continued?.traceId).toBe(traceparent.traceId);
    expect(currentTraceparent()).toBeUndefined();
  });

  it('puts the trace id of the active span on log lines and redacts secrets and text', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const child = createLogger('svc', 'info', sink);
    trellisTracer().startActiveSpan('work', (span) => {
      child.info({ tenant: 'acme', apiKey: 'sk-secret', chunk: { text: 'private document text' } }, 'hello');
      span.end();
    });
    const line = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    expect(line.service).toBe('svc');
    expect(line.tenant).toBe('acme');
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(line)).not.toContain('sk-secret');
    expect(JSON.stringify(line)).not.toContain('private document text');
  });
});
