import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { loadConfig } from '@trellis/config';
import type { RunningProcess } from '@trellis/runtime';
import { freePort } from '@trellis/testing';
import { startStandaloneServer } from '../src';
import { waitUntilIndexed } from './helpers';

/**
 * The server runs in this test's process, so its core is this main thread and the test can
 * block it the way synchronous query work does; the calls are made from a worker thread
 * (fixtures/blocked-core-prober.js), which the block does not stop. The front thread needs the
 * build output (`npm run build`).
 */
const PROBER = resolve(__dirname, 'fixtures/blocked-core-prober.js');
const KEYS = 'key-of-a=tenant-a,key-of-b=tenant-b';
const TEXT = 'Marie Curie led the Radium Institute in Paris. Pierre Curie discovered piezoelectricity with his brother Jacques Curie in 1880.';
/** How long the core is kept busy; every figure the prober reports must fall inside it. */
const BLOCK_MS = 3_000;
/**
 * Answers from the front must not wait for the core: far under the block. (The 100 ms target is
 * measured by `npm run bench:load`; this bound leaves room for a loaded test machine.)
 */
const FAST_MS = 250;

interface Timed {
  readonly code: string;
  readonly details?: string;
  readonly retryAfterMs?: number;
  readonly ms: number;
  readonly at: number;
  readonly value?: unknown;
}

interface Server {
  readonly running: RunningProcess;
  readonly httpUrl: string;
  dispose(): Promise<void>;
}

async function startServer(env: Record<string, string>): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'trellis-front-'));
  const httpPort = await freePort();
  const config = loadConfig(
    { TRELLIS_DATA_DIR: dataDir, TRELLIS_GRPC_PORT: String(await freePort()), TRELLIS_HTTP_PORT: String(httpPort), TRELLIS_LOG_LEVEL: 'silent', TRELLIS_EMBEDDINGS: 'hash', TRELLIS_API_KEYS: KEYS, ...env },
    'standalone',
  );
  const running = await startStandaloneServer(config);
  return {
    running,
    httpUrl: `http://127.0.0.1:${running.httpPort}`,
    dispose: async () => {
      await running.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function withKnowledgeBase(server: Server): Promise<TrellisClient> {
  const a = new TrellisClient({ address: server.running.grpcAddress!, apiKey: 'key-of-a' });
  await a.createKnowledgeBase({ name: 'alpha' });
  const document = await a.uploadDocument({ knowledgeBase: 'alpha', filename: 'curie.txt', sourceUri: 'curie.txt' }, Buffer.from(TEXT));
  await waitUntilIndexed(a, 'alpha', [document.id]);
  return a;
}

/** A prober thread, connected and warmed up. */
async function startProber(server: Server): Promise<{ run<T>(scenario: string): Promise<T>; close(): Promise<void> }> {
  const worker = new Worker(PROBER, { workerData: { grpcAddress: server.running.grpcAddress, httpUrl: server.httpUrl, apiKey: 'key-of-a', knowledgeBase: 'alpha' } });
  const next = () =>
    new Promise<unknown>((ok, fail) => {
      worker.once('message', (m: unknown) => (typeof m === 'object' && m !== null && 'error' in m ? fail(new Error(String((m as { error: unknown }).error))) : ok(m)));
      worker.once('error', fail);
    });
  await next();
  return {
    run: async <T>(scenario: string) => {
      const result = next();
      worker.postMessage(scenario);
      return (await result) as T;
    },
    close: async () => {
      worker.postMessage('close');
      await worker.terminate();
    },
  };
}

/** Keeps this thread, the server's core, busy for `ms`, as synchronous SQLite and vector work does; returns when it ended. */
function blockCore(ms: number): number {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Nothing yields: no timer, socket or message of this thread runs.
  }
  return until;
}

/** Starts the prober's scenario and blocks the core at once (the prober gives the block 30 ms to begin); the report and when the block ended. */
async function duringBlock<T>(prober: { run<R>(scenario: string): Promise<R> }, scenario: string): Promise<{ report: T; blockedUntil: number }> {
  const report = prober.run<T>(scenario);
  const blockedUntil = blockCore(BLOCK_MS);
  return { report: await report, blockedUntil };
}

describe('standalone front thread: one slot, no queue, the core blocked', () => {
  let server: Server;
  let a: TrellisClient;
  let prober: Awaited<ReturnType<typeof startProber>>;

  beforeAll(async () => {
    server = await startServer({ TRELLIS_MAX_CONCURRENT_REQUESTS: '1', TRELLIS_MAX_QUEUED_REQUESTS: '0', TRELLIS_MAX_EVENT_LOOP_DELAY_MS: '0' });
    a = await withKnowledgeBase(server);
    prober = await startProber(server);
  }, 120_000);

  afterAll(async () => {
    a?.close();
    await prober?.close();
    await server?.dispose();
  });

  it("forwards each call's metadata: the API key picks the tenant, and the core's status and message come back", async () => {
    expect((await a.getKnowledgeBase('alpha')).name).toBe('alpha');
    const b = a.asCaller({ apiKey: 'key-of-b' });
    const nobody = a.asCaller({ apiKey: 'not-a-key' });
    await expect(b.getKnowledgeBase('alpha')).rejects.toMatchObject({ code: status.NOT_FOUND });
    await expect(nobody.getKnowledgeBase('alpha')).rejects.toMatchObject({ code: status.UNAUTHENTICATED, details: 'a valid API key is required' });
  });

  it('forwards streams: the upload (client stream) was indexed, and a chat answer streams back with its citations', async () => {
    const events = [];
    for await (const event of a.chat({ knowledgeBase: 'alpha', question: 'Who discovered piezoelectricity?' })) events.push(event);
    expect(events.length).toBeGreaterThan(1);
    expect(JSON.stringify(events)).toMatch(/piezoelectricity/);
    expect(JSON.stringify(events)).toMatch(/curie\.txt/);
  });

  it("refuses at once while the one slot is taken, answers health, and a call whose deadline passes frees its slot", async () => {
    interface Report {
      refusals: Timed[];
      probes: Record<'grpcHealth' | 'healthz' | 'readyz', Timed>;
      held: Timed;
      refusedAfter: Timed;
      measuredUntil: number;
      admitted: Timed;
    }
    const { report, blockedUntil } = await duringBlock<Report>(prober, 'whileFull');
    // Everything but the admitted call was answered while the core could not run.
    expect(report.measuredUntil).toBeLessThan(blockedUntil);
    for (const refusal of report.refusals) {
      expect(refusal).toMatchObject({ code: 'RESOURCE_EXHAUSTED', details: expect.stringMatching(/^server overloaded \(queue_full\)/) });
      expect(refusal.retryAfterMs).toBeGreaterThan(0);
      expect(refusal.ms).toBeLessThan(FAST_MS);
    }
    expect(report.probes.grpcHealth).toMatchObject({ code: 'OK', value: 'SERVING' });
    expect(report.probes.healthz).toMatchObject({ code: 'OK', value: 200 });
    expect(report.probes.readyz).toMatchObject({ code: 'OK', value: 200 });
    for (const probe of Object.values(report.probes)) expect(probe.ms).toBeLessThan(FAST_MS);
    // The holder's 500 ms deadline passed inside the core: cancelled there, its slot came free,
    // so the next call was admitted (and waited for the core), and the one after it refused.
    expect(report.held.code).toBe('DEADLINE_EXCEEDED');
    expect(report.refusedAfter.code).toBe('RESOURCE_EXHAUSTED');
    expect(report.admitted).toMatchObject({ code: 'OK', value: expect.any(Number) });
    expect(report.admitted.value).toBeGreaterThan(0);
    expect(report.admitted.at).toBeGreaterThanOrEqual(blockedUntil);

    const metrics = await fetch(`${server.httpUrl}/metrics`).then((r) => r.text());
    expect(metrics).toMatch(/^trellis_grpc_requests_rejected_total\{method="RetrieveChunks",reason="queue_full"[^}]*\} 6$/m);
    expect(metrics).toMatch(/^trellis_grpc_requests_in_flight\{[^}]*\} 0$/m);
  }, 60_000);
});

describe('standalone front thread: default limits, the core blocked', () => {
  let server: Server;
  let a: TrellisClient;
  let prober: Awaited<ReturnType<typeof startProber>>;

  beforeAll(async () => {
    server = await startServer({});
    a = await withKnowledgeBase(server);
    prober = await startProber(server);
  }, 120_000);

  afterAll(async () => {
    a?.close();
    await prober?.close();
    await server?.dispose();
  });

  it("refuses new calls at once as event_loop_busy once the core's loop is behind, and health answers", async () => {
    interface Report {
      refusals: Timed[];
      probes: Record<'grpcHealth' | 'healthz', Timed>;
      measuredUntil: number;
    }
    const { report, blockedUntil } = await duringBlock<Report>(prober, 'whileBehind');
    expect(report.measuredUntil).toBeLessThan(blockedUntil);
    for (const refusal of report.refusals) {
      expect(refusal).toMatchObject({ code: 'RESOURCE_EXHAUSTED', details: expect.stringMatching(/^server overloaded \(event_loop_busy\)/) });
      expect(refusal.ms).toBeLessThan(FAST_MS);
    }
    expect(report.probes.grpcHealth).toMatchObject({ code: 'OK', value: 'SERVING' });
    expect(report.probes.healthz).toMatchObject({ code: 'OK', value: 200 });
    for (const probe of Object.values(report.probes)) expect(probe.ms).toBeLessThan(FAST_MS);
    // Once the core has caught up, calls are admitted again.
    await expect(a.retrieveChunks({ knowledgeBase: 'alpha', query: 'Radium Institute', topK: 3 })).resolves.toMatchObject({ chunks: expect.any(Array) });
  }, 60_000);
});
