import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleHandler, resolveInside } from './console-static';

/** A raw request, so paths like `/../x` reach the server as written (fetch would normalise them). */
function raw(port: number, path: string, method = 'GET'): Promise<{ status: number; type: string | undefined; cache: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], cache: res.headers['cache-control'], body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('web console files', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let missingPort: number;
  let missing: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'console-static-'));
    const dist = join(dir, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>console</title>');
    writeFileSync(join(dist, 'assets', 'app-1a2b.js'), 'console.log(1)');
    writeFileSync(join(dist, 'assets', 'app-1a2b.css'), 'body{}');
    writeFileSync(join(dir, 'secret.txt'), 'outside the build');
    const handle = createConsoleHandler(dist);
    server = createServer((req, res) => {
      if (!handle(req, res, new URL(`http://x${req.url ?? '/'}`).pathname)) res.writeHead(404).end('not mine');
    });
    const noBuild = createConsoleHandler(join(dir, 'nothing-here'));
    missing = createServer((req, res) => void noBuild(req, res, '/'));
    await Promise.all([new Promise<void>((r) => server.listen(0, '127.0.0.1', r)), new Promise<void>((r) => missing.listen(0, '127.0.0.1', r))]);
    port = (server.address() as AddressInfo).port;
    missingPort = (missing.address() as AddressInfo).port;
  });

  afterAll(() => {
    server?.close();
    missing?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the build with content types, hashed assets cached for good and the page revalidated', async () => {
    const page = await raw(port, '/');
    expect(page).toMatchObject({ status: 200, type: 'text/html; charset=utf-8', cache: 'no-cache' });
    expect(page.body).toContain('<title>console</title>');
    expect(await raw(port, '/assets/app-1a2b.js')).toMatchObject({ status: 200, type: 'text/javascript; charset=utf-8', cache: 'public, max-age=31536000, immutable', body: 'console.log(1)' });
    expect(await raw(port, '/assets/app-1a2b.css')).toMatchObject({ status: 200, type: 'text/css; charset=utf-8' });
    expect(await raw(port, '/assets/app-1a2b.js', 'HEAD')).toMatchObject({ status: 200, body: '' });
  });

  it('answers the app\'s own routes with index.html, and a missing asset with 404', async () => {
    for (const path of ['/chat', '/graph/curie', '/knowledge-bases?x=1']) {
      const page = await raw(port, path);
      expect(page.status, path).toBe(200);
      expect(page.body).toContain('<title>console</title>');
    }
    expect((await raw(port, '/assets/gone.js')).status).toBe(404);
    expect((await raw(port, '/favicon.ico')).status).toBe(404);
    for (const path of ['//[', '//:99999/api/v1', '/chat//x', '/a%20b']) expect((await raw(port, path)).status, path).toBe(404);
  });

  it('never leaves the build folder', async () => {
    for (const path of ['/../secret.txt', '/assets/../../secret.txt', '/%2e%2e/secret.txt', '/assets%2f..%2f..%2fsecret.txt', '/..%5csecret.txt', '/%00']) {
      const answer = await raw(port, path);
      expect(answer.body, path).not.toContain('outside the build');
      expect([400, 404], path).toContain(answer.status);
    }
    expect(resolveInside('/srv/dist', '/a/../../etc/passwd')).toBeNull();
    expect(resolveInside('/srv/dist', '/%E0%A4%A')).toBeNull();
    expect(resolveInside('/srv/dist', '/')).toBeUndefined();
    expect(resolveInside('/srv/dist', '/assets/x.js')).toBe('/srv/dist/assets/x.js');
  });

  it('leaves other methods to the caller, and says when the console was not built', async () => {
    expect(await raw(port, '/', 'POST')).toMatchObject({ status: 404, body: 'not mine' });
    const answer = await raw(missingPort, '/');
    expect(answer.status).toBe(503);
    expect(answer.body).toMatch(/web console is not built.*npm run build/);
  });
});
