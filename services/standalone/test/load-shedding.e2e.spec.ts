import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { credentials, makeGenericClientConstructor, status } from '@grpc/grpc-js';
import type { ServiceError } from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrellisClient } from '@trellis/client';
import { startStandaloneProcess } from '@trellis/testing';
import type { StandaloneProcess } from '@trellis/testing';
import { waitUntilIndexed } from './helpers';

const CORPUS = resolve(__dirname, '../../../datasets/nestjs-docs');
const BURST = 150;
/** A bound no healthy probe comes near; only a starved probe server reaches it. */
const PROBE_BOUND_MS = 5_000;

interface Passage {
  readonly id: string;
  readonly title: string;
  readonly text: string;
}

describe('standalone: a burst past the concurrency limit is shed, health keeps answering', () => {
  let server: StandaloneProcess;
  let clients: TrellisClient[];
  let questions: string[];

  beforeAll(async () => {
    server = await startStandaloneProcess({
      env: { TRELLIS_EMBEDDINGS: 'hash', TRELLIS_MAX_CONCURRENT_REQUESTS: '2', TRELLIS_MAX_QUEUED_REQUESTS: '2', TRELLIS_MAX_QUEUE_WAIT_MS: '20' },
    });
    const setup = new TrellisClient({ address: server.grpcAddress });
    await setup.createKnowledgeBase({ name: 'kb' });
    const passages = readFileSync(resolve(CORPUS, 'corpus.jsonl'), 'utf8').split('\n').filter(Boolean).slice(0, 20).map((l) => JSON.parse(l) as Passage);
    const ids: string[] = [];
    for (const p of passages) ids.push((await setup.uploadDocument({ knowledgeBase: 'kb', filename: `${p.id}.txt` }, Buffer.from(`${p.title}\n${p.text}`))).id);
    await waitUntilIndexed(setup, 'kb', ids);
    setup.close();
    questions = readFileSync(resolve(CORPUS, 'questions.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { question: string }).question);
    // Separate channels, as separate callers would have; shed calls are not retried, so every refusal is seen.
    clients = Array.from({ length: 10 }, () => new TrellisClient({ address: server.grpcAddress, retryShed: false, timeoutMs: 60_000 }));
    // Connected one after another before the burst, so the burst is query work, not handshakes.
    for (const client of clients) await client.retrieveChunks({ knowledgeBase: 'kb', query: 'warm up', topK: 1 });
    for (const client of clients) await client.ask({ knowledgeBase: 'kb', question: 'warm up', topK: 1 });
  }, 120_000);

  afterAll(async () => {
    for (const client of clients ?? []) client.close();
    await server?.dispose();
  });

  it('refuses some calls with RESOURCE_EXHAUSTED and retry-after-ms, answers the rest, and /healthz and gRPC health answer throughout', async () => {
    const Health = makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(server.grpcAddress, credentials.createInsecure()) as unknown as {
      check(request: { service: string }, options: { deadline: Date }, callback: (error: ServiceError | null, response: { status: string }) => void): void;
      close(): void;
    };
    // Uploads during indexing may have been shed (and retried by the client) already.
    const rejectedBefore = rejectedCount(await fetch(`${server.httpUrl}/metrics`).then((r) => r.text()));
    const probes: Array<{ http: number | string; grpc: string }> = [];
    let bursting = true;
    const prober = (async () => {
      while (bursting) {
        const http = await fetch(`${server.httpUrl}/healthz`, { signal: AbortSignal.timeout(PROBE_BOUND_MS) }).then(
          (r) => r.status,
          (e: Error) => e.name,
        );
        const grpc = await new Promise<string>((ok) => health.check({ service: '' }, { deadline: new Date(Date.now() + PROBE_BOUND_MS) }, (error, response) => ok(error ? status[error.code] : response.status)));
        probes.push({ http, grpc });
        await new Promise((r) => setTimeout(r, 100));
      }
    })();

    const calls = await Promise.allSettled(
      Array.from({ length: BURST }, (_, i) => {
        const client = clients[i % clients.length]!;
        const question = questions[i % questions.length]!;
        return i % 2 === 0 ? client.retrieveChunks({ knowledgeBase: 'kb', query: question, topK: 5 }) : client.ask({ knowledgeBase: 'kb', question, topK: 5 });
      }),
    );
    // Keep probing a little past the burst so at least a few probes overlap it.
    await new Promise((r) => setTimeout(r, 300));
    bursting = false;
    await prober;
    health.close();

    const refused = calls.filter((c): c is PromiseRejectedResult => c.status === 'rejected');
    const answered = calls.filter((c) => c.status === 'fulfilled');
    expect(refused.length).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(0);
    for (const { reason } of refused) {
      const error = reason as ServiceError;
      expect(status[error.code]).toBe('RESOURCE_EXHAUSTED');
      expect(error.details).toMatch(/^server overloaded \((queue_full|queue_timeout|event_loop_busy)\)/);
      expect(Number(error.metadata.get('retry-after-ms')[0])).toBeGreaterThan(0);
    }
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.every((p) => p.http === 200 && p.grpc === 'SERVING')).toBe(true);

    const metrics = await fetch(`${server.httpUrl}/metrics`).then((r) => r.text());
    expect(rejectedCount(metrics) - rejectedBefore).toBe(refused.length);
    expect(metrics).toMatch(/^trellis_grpc_requests_in_flight\{[^}]*\} 0$/m);
  }, 120_000);
});

/** The sum of `trellis_grpc_requests_rejected_total` over its methods and reasons. */
function rejectedCount(metrics: string): number {
  return [...metrics.matchAll(/^trellis_grpc_requests_rejected_total\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
}
