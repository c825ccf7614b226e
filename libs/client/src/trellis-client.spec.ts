import { join } from 'node:path';
import { Metadata, Server, ServerCredentials, loadPackageDefinition, status } from '@grpc/grpc-js';
import type { ServerWritableStream, ServiceDefinition, ServerUnaryCall, sendUnaryData } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { SpanKind, SpanStatusCode, context as otelContext, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, trellisTracer } from '@trellis/observability';
import type { TracingHandle } from '@trellis/observability';
import { GRPC_LOADER_OPTIONS, RETRY_AFTER_HEADER, protoDirectory } from '@trellis/grpc-edge';
import { TrellisClient } from './trellis-client';

/** A real gRPC server with the retrieval and chat APIs that remembers the metadata of each call. */
class RecordingRetrievalServer {
  readonly traceparents: Array<string | undefined> = [];
  readonly authorizations: Array<string | undefined> = [];
  private readonly server = new Server();

  address = '';

  async start(): Promise<string> {
    const protoDir = protoDirectory();
    const definition = loadSync(join(protoDir, 'trellis/v1/retrieval.proto'), { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] });
    const chatDefinition = loadSync(join(protoDir, 'trellis/v1/chat.proto'), { ...GRPC_LOADER_OPTIONS, includeDirs: [protoDir] });
    const chat = loadPackageDefinition(chatDefinition) as unknown as { trellis: { v1: { ChatService: { service: ServiceDefinition } } } };
    this.server.addService(chat.trellis.v1.ChatService.service, {
      chat: (call: ServerWritableStream<{ question: string }, unknown>) => this.chat(call),
      ask: (_call: unknown, callback: sendUnaryData<unknown>) => callback({ code: status.UNIMPLEMENTED }),
    });
    const pkg = loadPackageDefinition(definition) as unknown as { trellis: { v1: { RetrievalService: { service: ServiceDefinition } } } };
    this.server.addService(pkg.trellis.v1.RetrievalService.service, {
      retrieveChunks: (call: ServerUnaryCall<{ query: string }, unknown>, callback: sendUnaryData<unknown>) => {
        const value = call.metadata.get('traceparent')[0];
        this.traceparents.push(typeof value === 'string' ? value : undefined);
        const authorization = call.metadata.get('authorization')[0];
        this.authorizations.push(typeof authorization === 'string' ? authorization : undefined);
        if (call.request.query.startsWith('shed')) return this.shed(call.request.query, callback);
        if (call.request.query === 'missing') callback({ code: status.NOT_FOUND, details: 'no knowledge base "missing"' });
        else callback(null, { chunks: [] });
      },
    });
    const port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    this.address = `127.0.0.1:${port}`;
    return this.address;
  }

  stop(): void {
    this.server.forceShutdown();
  }

  /**
   * `shed-once` is refused before any event the first time; `fail-after-token` sends a token,
   * then is refused as if shed (which a client must not retry: the answer has begun).
   */
  private chat(call: ServerWritableStream<{ question: string }, unknown>): void {
    const question = call.request.question;
    const calls = (this.shedCalls.get(`chat:${question}`) ?? 0) + 1;
    this.shedCalls.set(`chat:${question}`, calls);
    const refuse = () => {
      const metadata = new Metadata();
      metadata.set(RETRY_AFTER_HEADER, '20');
      call.emit('error', { code: status.RESOURCE_EXHAUSTED, details: 'server overloaded (queue_full)', metadata });
    };
    if (question === 'shed-once' && calls === 1) return refuse();
    call.write({ token: 'Hello' });
    if (question === 'fail-after-token') return refuse();
    call.write({ done: { text: 'Hello' } });
    call.end();
  }

  /** Calls per `shed…` query; `shed-once` is refused the first time, `shed-always` every time. */
  readonly shedCalls = new Map<string, number>();

  private shed(query: string, callback: sendUnaryData<unknown>): void {
    const calls = (this.shedCalls.get(query) ?? 0) + 1;
    this.shedCalls.set(query, calls);
    if (query === 'shed-once' && calls > 1) return callback(null, { chunks: [] });
    const metadata = new Metadata();
    metadata.set(RETRY_AFTER_HEADER, '20');
    callback({ code: status.RESOURCE_EXHAUSTED, details: 'server overloaded (queue_full)', metadata });
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

describe('TrellisClient and load shedding', () => {
  it('sends a shed call again after the retry-after-ms the server asked for', async () => {
    await expect(client.retrieveChunks({ knowledgeBase: 'kb', query: 'shed-once' })).resolves.toMatchObject({ chunks: [] });
    expect(server.shedCalls.get('shed-once')).toBe(2);
  });

  it('gives up with RESOURCE_EXHAUSTED when the next wait would pass the deadline', async () => {
    const short = new TrellisClient({ address: server.address, timeoutMs: 300 });
    try {
      await expect(short.retrieveChunks({ knowledgeBase: 'kb', query: 'shed-always' })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
      expect(server.shedCalls.get('shed-always')).toBeGreaterThan(1);
    } finally {
      short.close();
    }
  });

  it('sends a chat shed before its first event again, but not one that failed after an event', async () => {
    const events = [];
    for await (const event of client.chat({ knowledgeBase: 'kb', question: 'shed-once' })) events.push(event);
    expect(events.map((e) => e.token ?? e.done?.text)).toEqual(['Hello', 'Hello']);
    expect(server.shedCalls.get('chat:shed-once')).toBe(2);

    const seen: string[] = [];
    const failing = (async () => {
      for await (const event of client.chat({ knowledgeBase: 'kb', question: 'fail-after-token' })) seen.push(event.token ?? '');
    })();
    await expect(failing).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(seen).toEqual(['Hello']);
    expect(server.shedCalls.get('chat:fail-after-token')).toBe(1);
  });

  it('does not retry when told not to', async () => {
    const plain = new TrellisClient({ address: server.address, retryShed: false });
    try {
      await expect(plain.retrieveChunks({ knowledgeBase: 'kb', query: 'shed-never-retried' })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
      expect(server.shedCalls.get('shed-never-retried')).toBe(1);
    } finally {
      plain.close();
    }
  });
});

describe('TrellisClient.asCaller', () => {
  it('sends each view\'s key over the same channels, as the client sends its own, and invoke calls by gRPC name', async () => {
    server.authorizations.length = 0;
    const keyed = new TrellisClient({ address: server.address, apiKey: 'key-1' });
    try {
      await keyed.retrieveChunks({ knowledgeBase: 'kb', query: 'q' });
      await keyed.asCaller({ apiKey: 'key-2' }).retrieveChunks({ knowledgeBase: 'kb', query: 'q' });
      await keyed.asCaller({}).invoke('retrieval', 'RetrieveChunks', { knowledgeBase: 'kb', query: 'q' });
      expect(server.authorizations).toEqual(['Bearer key-1', 'Bearer key-2', undefined]);
      await expect(keyed.invoke('retrieval', 'NoSuchMethod', {})).rejects.toThrow(/no unary method NoSuchMethod/);
    } finally {
      keyed.close();
    }
  });
});
