import { join } from 'node:path';
import { Server, ServerCredentials, loadPackageDefinition, status } from '@grpc/grpc-js';
import type { ServiceDefinition, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, trellisTracer } from '@trellis/observability';
import type { TracingHandle } from '@trellis/observability';
import { GRPC_LOADER_OPTIONS, protoDirectory } from '@trellis/grpc-edge';
import { TrellisClient } from './trellis-client';

/** A real gRPC server with the retrieval API that remembers the metadata of each call. */
class RecordingRetrievalServer {
  readonly traceparents: Array<string | undefined> = [];
  private readonly server = new Server();

  async start(): Promise<string> {
    const protoDir = protoDirectory();
    const definition = loadSync(join(protoDir, 'trellis/v1/retrieval.proto'), { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] });
    const pkg = loadPackageDefinition(definition) as unknown as { trellis: { v1: { RetrievalService: { service: ServiceDefinition } } } };
    this.server.addService(pkg.trellis.v1.RetrievalService.service, {
      retrieveChunks: (call: ServerUnaryCall<{ query: string }, unknown>, callback: sendUnaryData<unknown>) => {
        const value = call.metadata.get('traceparent')[0];
        this.traceparents.push(typeof value === 'string' ? value : undefined);
        if (call.request.query === 'missing') callback({ code: status.NOT_FOUND, details: 'no knowledge base "missing"' });
        else callback(null, { chunks: [] });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    return `127.0.0.1:${port}`;
  }

  stop(): void {
    this.server.forceShutdown();
  }
}

const exporter = new InMemorySpanExporter();
const processor = new SimpleSpanProcessor({ exporter });
const server = new RecordingRetrievalServer();
let client: TrellisClient;
let tracing: TracingHandle | undefined;

beforeAll(async () => {
  client = new TrellisClient({ address: await server.start() });
});

afterAll(async () => {
  client.close();
  server.stop();
  await tracing?.shutdown();
});

describe('TrellisClient tracing', () => {
  it('sends no trace context while the process records no spans', async () => {
    await client.retrieveChunks({ knowledgeBase: 'kb', query: 'q' });
    expect(server.traceparents).toEqual([undefined]);
  });

  it('makes each call a CLIENT span, child of the active span, and sends its traceparent', async () => {
    tracing = startTracing({ serviceName: 'client-test', spanProcessors: [processor] });
    server.traceparents.length = 0;
    const parent = trellisTracer().startSpan('caller');
    await otelContext.with(trace.setSpan(otelContext.active(), parent), () => client.retrieveChunks({ knowledgeBase: 'kb', query: 'q' }));
    parent.end();
    await processor.forceFlush();

    const span = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT)!;
    expect(span.name).toBe('trellis.v1.RetrievalService/RetrieveChunks');
    expect(span.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'trellis.v1.RetrievalService', 'rpc.method': 'RetrieveChunks', 'rpc.grpc.status_code': 0 });
    expect(span.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
    // What the server received continues this very span: same trace, the client span as parent.
    const [, traceId, spanId] = server.traceparents[0]!.split('-');
    expect(traceId).toBe(span.spanContext().traceId);
    expect(spanId).toBe(span.spanContext().spanId);
  });

  it('marks a call that fails ERROR with the status code name, not the server details', async () => {
    exporter.reset();
    await expect(client.retrieveChunks({ knowledgeBase: 'kb', query: 'missing' })).rejects.toMatchObject({ code: status.NOT_FOUND });
    await processor.forceFlush();
    const span = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CLIENT)!;
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'NOT_FOUND' });
    expect(span.attributes['rpc.grpc.status_code']).toBe(status.NOT_FOUND);
    // Outside any span the call starts its own trace, and still propagates it.
    expect(span.parentSpanContext).toBeUndefined();
    expect(server.traceparents.at(-1)).toContain(span.spanContext().spanId);
  });
});
