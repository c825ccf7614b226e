import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startStandaloneProcess, waitFor } from '@trellis/testing';
import { fetchRetryingShed } from './http-helpers';
import type { StandaloneProcess } from '@trellis/testing';

const ROOT = resolve(__dirname, '../../..');

/**
 * The HTTP API as its own process (the distributed deployable, services/http-api/dist/main.js)
 * in front of another process's gRPC API, with the API on a port of its own; and standalone
 * given TRELLIS_HTTP_API_PORT, which moves the API off the probe port.
 */
describe('the http-api service and a separate API port', () => {
  let grpcServer: StandaloneProcess;
  let gateway: { url: string; probes: string; stop(): Promise<number | null>; output(): string };
  let standaloneApi: string;

  beforeAll(async () => {
    const apiPort = await freePort();
    grpcServer = await startStandaloneProcess({ env: { TRELLIS_API_KEYS: 'k=tenant', TRELLIS_INTERNAL_TOKEN: 'a-long-internal-secret-for-the-test', TRELLIS_EMBEDDINGS: 'hash', TRELLIS_HTTP_API_PORT: String(apiPort) } });
    const [httpPort, ownPort] = [await freePort(), await freePort()];
    let log = '';
    const child = spawn(process.execPath, [join(ROOT, 'services/http-api/dist/main.js')], {
      env: {
        PATH: process.env.PATH ?? '',
        TRELLIS_HTTP_PORT: String(httpPort),
        TRELLIS_HTTP_API_PORT: String(ownPort),
        TRELLIS_HTTP_API_GRPC_ADDRESS: grpcServer.grpcAddress,
        TRELLIS_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => (log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (log += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    gateway = {
      url: `http://127.0.0.1:${ownPort}`,
      probes: `http://127.0.0.1:${httpPort}`,
      output: () => log,
      stop: () => {
        child.kill('SIGTERM');
        return exited;
      },
    };
    await waitFor(async () => (await fetch(`${gateway.probes}/healthz`).catch(() => null))?.ok, 30_000, 'http-api to answer /healthz');
    standaloneApi = `http://127.0.0.1:${apiPort}`;
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await grpcServer?.dispose();
  });

  it('serves REST and OpenAI over the other process\'s gRPC API, with the key forwarded', async () => {
    const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
    expect((await fetchRetryingShed(`${gateway.url}/api/v1/knowledge-bases`, { method: 'POST', headers, body: JSON.stringify({ name: 'remote' }) })).status).toBe(201);
    const models = (await (await fetchRetryingShed(`${gateway.url}/v1/models`, { headers })).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(['remote']);
    expect((await fetchRetryingShed(`${gateway.url}/api/v1/knowledge-bases`)).status).toBe(401);
  });

  it('keeps the API off the probe port when it has its own, and the probes off the API port', async () => {
    expect((await fetch(`${gateway.probes}/api/v1/knowledge-bases`)).status).toBe(404);
    expect((await fetch(`${gateway.probes}/metrics`)).status).toBe(200);
    expect((await fetchRetryingShed(`${gateway.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${grpcServer.httpUrl}/api/openapi.json`)).status).toBe(404);
    expect((await fetch(`${standaloneApi}/api/openapi.json`)).status).toBe(200);
  });

  it('serves the web console on its API port, with the app\'s routes answered by its page', async () => {
    for (const path of ['/', '/graph', '/knowledge-bases']) {
      const page = await fetchRetryingShed(`${gateway.url}${path}`);
      expect(page.status, path).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await page.text()).toContain('<div id="root">');
    }
    const html = await (await fetchRetryingShed(`${gateway.url}/`)).text();
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetchRetryingShed(`${gateway.url}${script!}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${gateway.probes}/`)).status).toBe(404);
  });

  it('stops on SIGTERM even with an event stream open, ending the stream', async () => {
    const stream = await fetchRetryingShed(`${gateway.url}/api/v1/knowledge-bases/remote/events`, { headers: { authorization: 'Bearer k' } });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const drained = stream.text().catch(() => 'cut');
    const started = Date.now();
    expect(await gateway.stop(), gateway.output()).toBe(0);
    // The grace for requests in flight is 5 s; the stream is cut after it, not waited for.
    expect(Date.now() - started).toBeLessThan(10_000);
    await drained;
  }, 20_000);
});
