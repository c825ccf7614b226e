import { afterEach, describe, expect, it } from 'vitest';
import type { Server } from 'node:http';
import { startProbeServer } from './http-probes';
import { TrellisMetrics } from './metrics';

const rows = [
  { tenant: 'acme-corp', knowledgeBase: 'merger-plans', status: 'pending', count: 3 },
  { tenant: 'globex', knowledgeBase: 'merger-plans', status: 'pending', count: 1 },
];

describe('metrics say nothing about who the tenants are unless the operator allows it', () => {
  it('labels tenants and knowledge bases with stable digests by default', async () => {
    const metrics = new TrellisMetrics('test');
    metrics.trackDocuments(async () => rows);
    metrics.extractionCalls.inc({ knowledge_base: metrics.knowledgeBaseLabel('merger-plans') });
    const scrape = await metrics.registry.metrics();
    expect(scrape).not.toMatch(/acme-corp|globex|merger-plans/);
    const series = scrape.split('\n').filter((l) => l.startsWith('trellis_documents_indexing{'));
    expect(series).toHaveLength(2);
    for (const line of series) expect(line).toMatch(/tenant="tenant-[0-9a-f]{12}",knowledge_base="kb-[0-9a-f]{12}"/);
    // The same knowledge base gets the same label on every counter and in every process.
    expect(metrics.knowledgeBaseLabel('merger-plans')).toBe(new TrellisMetrics('other').knowledgeBaseLabel('merger-plans'));
    expect(scrape).toContain(`trellis_extraction_llm_calls_total{knowledge_base="${metrics.knowledgeBaseLabel('merger-plans')}"`);
  });

  it('uses the names when TRELLIS_METRICS_NAMES is on', async () => {
    const metrics = new TrellisMetrics('test', { namesInLabels: true });
    metrics.trackDocuments(async () => rows);
    expect(await metrics.registry.metrics()).toContain('tenant="acme-corp",knowledge_base="merger-plans"');
  });
});

describe('/metrics behind a token', () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  it('answers 401 without the bearer token, the scrape with it; health stays open', async () => {
    const metrics = new TrellisMetrics('test');
    const started = await startProbeServer({ host: '127.0.0.1', port: 0, registry: metrics.registry, readiness: async () => undefined, metricsToken: 'scrape-secret-123456' });
    server = started.server;
    const url = `http://127.0.0.1:${started.port}`;
    const scrape = (authorization?: string) => fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
    expect((await scrape()).status).toBe(401);
    expect((await scrape('Bearer wrong')).status).toBe(401);
    expect((await scrape('Bearer scrape-secret-12345')).status).toBe(401);
    const ok = await scrape('Bearer scrape-secret-123456');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('trellis_process_cpu_seconds_total');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
  });
});
