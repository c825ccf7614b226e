import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { startProbeServer } from './http-probes';

describe('probe server', () => {
  it('answers /readyz 503 when the readiness check hangs, within its bound, and /healthz meanwhile', async () => {
    const { server, port } = await startProbeServer({ host: '127.0.0.1', port: 0, registry: new Registry(), readiness: () => new Promise<void>(() => undefined), readinessTimeoutMs: 100 });
    try {
      const ready = fetch(`http://127.0.0.1:${port}/readyz`);
      const health = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(health.status).toBe(200);
      const response = await ready;
      expect(response.status).toBe(503);
      expect(await response.text()).toBe('not ready: readiness check timed out after 100 ms\n');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('answers /readyz 200 when the check passes in time', async () => {
    const { server, port } = await startProbeServer({ host: '127.0.0.1', port: 0, registry: new Registry(), readiness: async () => undefined });
    try {
      expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
