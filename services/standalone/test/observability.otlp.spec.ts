import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { DistributedDeployment, startStandaloneProcess } from '@trellis/testing';
import { describeWithInfra } from '@trellis/testing/suites';
import type { StandaloneProcess } from '@trellis/testing';
import { EXAMPLES_DIR, waitUntilIndexed } from './helpers';

const kafkaBrokers = process.env.TRELLIS_TEST_KAFKA_BROKERS;
const mysqlUrl = process.env.TRELLIS_TEST_MYSQL_URL;

interface ReceivedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  /** OTLP span kind: 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number>>;
}

interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: { stringValue?: string } }[] };
    scopeSpans?: {
      spans?: { name: string; traceId: string; spanId: string; parentSpanId?: string; kind?: number; attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[] }[];
    }[];
  }[];
}

/**
 * A stand-in OpenTelemetry collector: receives OTLP/HTTP JSON on /v1/traces, so the built
 * processes export spans exactly as they would to a real collector, configured by the
 * standard OTEL_* variables only.
 */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server: Server | undefined;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces') this.collect(JSON.parse(body) as OtlpJson);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The env that makes a process export its spans here, promptly. */
  static env(endpoint: string, serviceName?: string): Record<string, string> {
    return {
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      ...(serviceName ? { OTEL_SERVICE_NAME: serviceName } : {}),
    };
  }

  private collect(payload: OtlpJson): void {
    for (const resource of payload.resourceSpans ?? []) {
      const service = resource.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          const attributes = Object.fromEntries((span.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? Number(a.value.intValue)]));
          this.spans.push({ service, name: span.name, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', kind: span.kind ?? 0, attributes });
        }
      }
    }
  }
}

const HOPS = ['document.ingested process', 'chunk.ready process', 'chunk.extracted process'];

/** Waits until the upload's trace holds every hop; returns the trace's spans. */
async function traceOfUpload(receiver: OtlpReceiver, timeoutMs = 30_000): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const upload = receiver.spans.find((s) => s.name === 'trellis.v1.KnowledgeBaseService/UploadDocument');
    const trace = upload ? receiver.spans.filter((s) => s.traceId === upload.traceId) : [];
    if (HOPS.every((hop) => trace.some((s) => s.name === hop))) return trace;
    if (Date.now() > deadline) throw new Error(`incomplete trace: ${JSON.stringify(trace.map((s) => `${s.service} ${s.name}`))}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('traces of the built standalone server, exported over OTLP by OTEL_* variables', () => {
  const receiver = new OtlpReceiver();
  let server: StandaloneProcess;
  let client: TrellisClient;

  beforeAll(async () => {
    server = await startStandaloneProcess({ env: OtlpReceiver.env(await receiver.start()) });
    client = new TrellisClient({ address: server.grpcAddress });
  });

  afterAll(async () => {
    client?.close();
    await server?.dispose();
    await receiver.stop();
  });

  it('one upload is one trace from the gRPC call to the graph write', async () => {
    await client.createKnowledgeBase({ name: 'otlp' });
    const document = await client.uploadDocument({ knowledgeBase: 'otlp', filename: 'polonium.txt' }, readFileSync(join(EXAMPLES_DIR, 'polonium.txt')));
    await waitUntilIndexed(client, 'otlp', [document.id]);
    const trace = await traceOfUpload(receiver);
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['trellis-standalone']));
  });
});

describeWithInfra('traces across real Kafka: six processes, one trace per document', { kafka: true, mysql: true }, () => {
  const receiver = new OtlpReceiver();
  let deployment: DistributedDeployment;
  let client: TrellisClient;

  beforeAll(async () => {
    const endpoint = await receiver.start();
    // OTEL_SERVICE_NAME is left unset so each process names itself trellis-<service>.
    deployment = new DistributedDeployment({ kafkaBrokers: kafkaBrokers!, mysqlUrl: mysqlUrl!, runId: randomBytes(4).toString('hex'), extraEnv: OtlpReceiver.env(endpoint) });
    deployment.prepare();
    await deployment.startAll();
    client = new TrellisClient({ address: '127.0.0.1:1', addresses: deployment.addresses() });
  }, 240_000);

  afterAll(async () => {
    client?.close();
    await deployment?.tearDown();
    await receiver.stop();
  });

  it('carries the trace context in Kafka headers from ingestion through chunking and extraction to graph-store', async () => {
    await client.createKnowledgeBase({ name: 'otlp' });
    const document = await client.uploadDocument({ knowledgeBase: 'otlp', filename: 'polonium.txt' }, readFileSync(join(EXAMPLES_DIR, 'polonium.txt')));
    await waitUntilIndexed(client, 'otlp', [document.id], 120_000);
    const trace = await traceOfUpload(receiver, 60_000);
    const serviceOf = (name: string) => trace.find((s) => s.name === name)?.service;
    expect(serviceOf('trellis.v1.KnowledgeBaseService/UploadDocument')).toBe('trellis-ingestion');
    expect(serviceOf('document.ingested process')).toBe('trellis-chunking');
    expect(serviceOf('chunk.ready process')).toBe('trellis-extraction');
    expect(serviceOf('chunk.extracted process')).toBe('trellis-graph-store');
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const chunkExtracted = trace.find((s) => s.name === 'chunk.extracted process')!;
    const publish = byId.get(chunkExtracted.parentSpanId);
    expect(publish?.name).toBe('chunk.extracted publish');
    expect(publish?.service).toBe('trellis-extraction');
    expect(byId.get(publish!.parentSpanId)?.name).toBe('chunk.ready process');
    // Each service's store calls are in the trace, named for the database behind them.
    const graphWrite = trace.find((s) => s.name === 'db.applyChunkExtraction');
    expect(graphWrite?.service).toBe('trellis-graph-store');
    expect(graphWrite?.attributes['db.system.name']).toMatch(/^(mariadb|mysql|tidb)$/);
  });

  it('each consumer process exports the Kafka lag of its group, drained to 0 once the document is indexed', async () => {
    const consumers = [['chunking', 'document.ingested'], ['extraction', 'chunk.ready'], ['graph-store', 'chunk.extracted']] as const;
    for (const [group, topic] of consumers) {
      const { httpPort } = deployment.processes.get(group)!;
      const series = new RegExp(`^trellis_consumer_lag_messages\\{topic="${topic}",group="${group}"[^}]*\\} (\\d+)$`, 'm');
      // A reading is cached for 15 s; the last commit can land just after the document shows as graphed.
      const deadline = Date.now() + 40_000;
      let lag: number | undefined;
      for (;;) {
        const match = series.exec(await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text());
        lag = match ? Number(match[1]) : undefined;
        if (lag === 0 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 1_000));
      }
      expect(lag, `${group} on ${topic}`).toBe(0);
    }
  });

  it('traces a chat question as one trace: chat server span, its retrieval client calls, and the retrieval server spans under them', async () => {
    await client.ask({ knowledgeBase: 'otlp', question: 'Who named polonium?' });
    const SERVER = 2;
    const CLIENT = 3;
    const deadline = Date.now() + 30_000;
    let trace: ReceivedSpan[] = [];
    for (;;) {
      const ask = receiver.spans.find((s) => s.name === 'trellis.v1.ChatService/Ask' && s.kind === SERVER);
      trace = ask ? receiver.spans.filter((s) => s.traceId === ask.traceId) : [];
      if (trace.some((s) => s.service === 'trellis-retrieval' && s.kind === SERVER)) break;
      if (Date.now() > deadline) throw new Error(`incomplete trace: ${JSON.stringify(trace.map((s) => `${s.service} ${s.name}`))}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const ask = trace.find((s) => s.name === 'trellis.v1.ChatService/Ask')!;
    expect(ask.service).toBe('trellis-chat');
    expect(ask.parentSpanId).toBe('');
    const retrievalServer = trace.filter((s) => s.service === 'trellis-retrieval' && s.kind === SERVER);
    for (const server of retrievalServer) {
      const caller = byId.get(server.parentSpanId);
      expect(caller?.kind).toBe(CLIENT);
      expect(caller?.service).toBe('trellis-chat');
      expect(caller?.name).toBe(server.name);
      expect(caller?.attributes).toMatchObject({ 'rpc.system': 'grpc', 'rpc.service': 'trellis.v1.RetrievalService', 'rpc.grpc.status_code': 0 });
      expect(byId.get(caller!.parentSpanId)?.name).toBe(ask.name);
    }
    // The retrieval service's store reads hang under its server spans.
    expect(trace.some((s) => s.service === 'trellis-retrieval' && s.name.startsWith('db.search'))).toBe(true);
  });
});
